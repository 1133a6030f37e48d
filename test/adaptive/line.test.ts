// Unit tests of an adaptive limit's admissions beside its line of waiters: served first, never in the way of those
// who may go, and served again when a partition's guarantee lapses without any release.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adaptiveConcurrency } from '../../src/adaptive/adaptive-concurrency.js';
import { ACTIVE_MS } from '../../src/adaptive/partitions.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { LocalAdmission, LocalSlot, LocalWait } from '../../src/policies/local-policy.js';
import { ManualClock, StubAlgorithm } from './stub-algorithm.js';

function limitOf(limit: number, partitions?: Record<string, number>) {
  const algorithm = new StubAlgorithm(limit);
  const clock = new ManualClock();
  const policy = adaptiveConcurrency({
    algorithm,
    clock: clock.read,
    ...(partitions === undefined ? {} : { partitions }),
  });
  const hold = (partition?: string): LocalSlot => {
    const { slot } = policy.admit(partition);
    assert.ok(slot !== undefined, `admitted for ${partition}`);
    return slot;
  };
  return { policy, algorithm, clock, hold };
}

/** A wait with no deadline (past what one timer honours): a caller left in line keeps no timer running. */
function waitFor(partition: string | undefined): LocalWait {
  return { partition, maxWaitMs: 2 ** 31, signal: undefined };
}

/** Records when a queued admission settles. */
function watch(queued: Promise<LocalAdmission>): { admission: () => LocalAdmission | undefined } {
  let admission: LocalAdmission | undefined;
  void queued.then((granted) => {
    admission = granted;
  });
  return { admission: () => admission };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('adaptive limit: admissions while others wait', () => {
  it('serves the line before an admission, then admits it if room is left', async () => {
    const { policy, algorithm, hold } = limitOf(1);
    hold();
    const waiting = watch(policy.queue(waitFor(undefined)));
    // Room that came by the limit alone goes to the waiter first.
    algorithm.limit = 2;
    assert.deepEqual(policy.admit(undefined), {
      result: { allowed: false, remaining: 0, resetMs: 1000, retryAfterMs: 1000 },
      slot: undefined,
    });
    await settle();
    assert.equal(waiting.admission()?.result.allowed, true);
    const second = watch(policy.queue(waitFor(undefined)));
    algorithm.limit = 4;
    assert.deepEqual(policy.admit(undefined).result, {
      allowed: true,
      remaining: 0,
      resetMs: 0,
      retryAfterMs: 0,
    });
    await settle();
    assert.deepEqual(second.admission()?.result, {
      allowed: true,
      remaining: 1,
      resetMs: 0,
      retryAfterMs: 0,
    });
    assert.equal(policy.inFlight, 4);
    assert.equal(policy.stats().partitions[0]?.rejected, 1);
  });

  it('peeks at the limit alone, not at the line', () => {
    const { policy, algorithm, hold } = limitOf(1);
    hold();
    watch(policy.queue(waitFor(undefined)));
    algorithm.limit = 2;
    assert.deepEqual(policy.peek(undefined), { allowed: true, remaining: 0, resetMs: 0, retryAfterMs: 0 });
    assert.equal(policy.inFlight, 1);
  });

  it('serves a waiter at once when a slot is free, its remainder counting its own slot', async () => {
    const { policy } = limitOf(3);
    const { result, slot } = await policy.queue(waitFor(undefined));
    assert.deepEqual(result, { allowed: true, remaining: 2, resetMs: 0, retryAfterMs: 0 });
    assert.equal(policy.inFlight, 1);
    slot?.release();
    assert.deepEqual([policy.inFlight, policy.stats().partitions[0]?.completed], [0, 1]);
  });
});

describe('adaptive limit: a wait through the limiter', () => {
  it('tells a wait admission remaining as consume does: the limit less those in flight after it', async () => {
    const policy = adaptiveConcurrency({ algorithm: new StubAlgorithm(3) });
    const limiter = createLimiter({ policy });
    const waited = await limiter.wait('a', { maxWaitMs: 0 });
    const consumed = await limiter.consume('a');
    assert.deepEqual([waited.remaining, consumed.remaining], [2, 1]);
    assert.deepEqual(
      waited.policies.map(({ allowed, remaining }) => [allowed, remaining]),
      [[true, 2]],
    );
    assert.equal(policy.inFlight, 2);
  });
});

describe('adaptive limit: partitions and the line', () => {
  it('admits a live request within its guarantee while a batch caller waits', async () => {
    const { policy, hold } = limitOf(10, { live: 0.9, batch: 0.1 });
    hold('batch');
    for (let i = 0; i < 8; i++) hold('live');
    // batch holds its guarantee of 1, and may not borrow the 1 left: it is live's.
    const batch = watch(policy.queue(waitFor('batch')));
    await settle();
    assert.equal(batch.admission(), undefined);
    assert.deepEqual(policy.admit('live').result, {
      allowed: true,
      remaining: 0,
      resetMs: 0,
      retryAfterMs: 0,
    });
    assert.equal(policy.inFlight, 10);
    assert.equal(batch.admission(), undefined);
  });

  it('serves an unnamed waiter on a timer once the partitions reserves lapse, with no release', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { policy, clock, hold } = limitOf(10, { live: 0.9, batch: 0.1 });
    hold('live').release();
    hold();
    // live asked just now: its 9 are kept free, and the unnamed may borrow only what is left beyond them.
    const unnamed = watch(policy.queue(waitFor(undefined)));
    clock.nowMs = ACTIVE_MS - 1;
    t.mock.timers.tick(ACTIVE_MS - 1);
    await settle();
    assert.equal(unnamed.admission(), undefined);
    clock.nowMs = ACTIVE_MS;
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(unnamed.admission()?.result, {
      allowed: true,
      remaining: 8,
      resetMs: 0,
      retryAfterMs: 0,
    });
    assert.equal(policy.inFlight, 2);
  });
});
