// A request the daily quota denies spends nothing from the burst bucket or the concurrency slots beside it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  concurrency,
  createLimiter,
  type Decision,
  fixedWindow,
  type Limiter,
  tokenBucket,
} from '../../src/index.js';
import type { RedisStore } from '../../src/stores/redis/index.js';

const DAILY = 3;
const DAILY_BURST = 5;
const DAILY_SLOTS = 2;

/**
 * Spends an identifier's daily quota with one request still in flight, then floods it: every request is denied by
 * the daily quota, and neither the bucket nor the slots (which would admit it) lose anything to the denials.
 */
export async function denialSpendsNothing(store: RedisStore, ids: (limiter: Limiter) => Promise<string[]>) {
  const limiter = createLimiter({
    policy: [
      tokenBucket({ capacity: DAILY_BURST, refillPerSecond: 0, name: 'burst' }),
      fixedWindow({ limit: DAILY, windowMs: '1d', name: 'daily' }),
      concurrency({ max: DAILY_SLOTS, leaseMs: '1m', name: 'slots' }),
    ],
    store,
    scope: `daily-${randomUUID().slice(0, 8)}`,
  });
  const figures = (decision: Decision) => decision.policies.map((p) => [p.allowed, p.remaining]);
  // One request in flight, the daily quota spent; a denial shows the daily quota as the one that denies.
  const settled = [
    [true, DAILY_BURST - DAILY],
    [true, 0],
    [true, DAILY_SLOTS - 1],
  ];
  const denied = settled.map((figure, i) => (i === 1 ? [false, 0] : figure));
  for (const id of await ids(limiter)) {
    const done = [await limiter.consume(id), await limiter.consume(id)];
    await Promise.all(done.map((decision) => decision.release?.()));
    const inFlight = await limiter.consume(id);
    assert.deepEqual(figures(inFlight), settled, id);
    const denials = await Promise.all(Array.from({ length: 8 }, () => limiter.consume(id)));
    for (let i = 0; i < 4; i++) denials.push(await limiter.consume(id));
    for (const denial of denials) {
      assert.equal(denial.degraded, undefined, id);
      assert.equal(denial.allowed, false, id);
      assert.equal(denial.release, undefined, `${id}: a denial holds no slot`);
      assert.deepEqual(figures(denial), denied, id);
    }
    assert.deepEqual(figures(await limiter.peek(id, { cost: 0 })), settled, `${id}: nothing spent`);
    await inFlight.release?.();
    assert.equal((await limiter.peek(id, { cost: 0 })).policies[2]?.remaining, DAILY_SLOTS, id);
  }
}
