// One script call carries a limiter's concurrent decisions: each must be decided with its own cost and timing,
// whether the batch sends them once (all alike) or one set per request.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { concurrency, createLimiter, type Decision, MemoryStore, tokenBucket } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { TestClock } from '../../src/testing/test-clock.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const view = ({ allowed, remaining, resetMs, retryAfterMs }: Decision) => ({
  allowed,
  remaining,
  resetMs,
  retryAfterMs,
});

describeWithRedis('batched requests on Redis', () => {
  let server: RedisServer;
  let redis: RedisStore;
  const clock = new TestClock();
  before(async () => {
    server = await startRedisServer();
    redis = new RedisStore({ url: server.url, clock: clock.read, commandTimeoutMs: 5000 });
  });
  after(async () => {
    await redis.close();
    await server.stop();
  });

  /** The same requests, issued in one turn, on Redis and on a MemoryStore at the same instant. */
  async function both(issue: (limiter: ReturnType<typeof createLimiter>) => Promise<Decision>[]) {
    const policy = tokenBucket({ capacity: 10, refillPerSecond: 1 });
    const scope = `batch-${Math.random().toString(36).slice(2)}`;
    const onRedis = await Promise.all(issue(createLimiter({ policy, store: redis, scope })));
    const memory = new MemoryStore({ clock: clock.read });
    const inMemory = await Promise.all(issue(createLimiter({ policy, store: memory, scope })));
    memory.close();
    return { onRedis: onRedis.map(view), inMemory: inMemory.map(view) };
  }

  it('decides each request of a mixed batch with its own cost', async () => {
    const { onRedis, inMemory } = await both((limiter) => [
      limiter.consume('a'),
      limiter.consume('a', { cost: 4 }),
      limiter.consume('b', { cost: 7 }),
      limiter.consume('b', { cost: 5 }),
    ]);
    assert.deepEqual(onRedis, inMemory);
    assert.deepEqual(
      onRedis.map((d) => d.remaining),
      [9, 5, 3, 3],
    );
  });

  it('decides a batch of alike requests as each alone', async () => {
    const { onRedis, inMemory } = await both((limiter) =>
      ['a', 'a', 'b', 'a'].map((id) => limiter.consume(id, { cost: 3 })),
    );
    assert.deepEqual(onRedis, inMemory);
    assert.deepEqual(
      onRedis.map((d) => d.remaining),
      [7, 4, 7, 1],
    );
  });

  it('gives each request of a batch its own lease', async () => {
    const scope = `lease-${Math.random().toString(36).slice(2)}`;
    const limiter = createLimiter({ policy: concurrency({ max: 3, leaseMs: '1m' }), store: redis, scope });
    const held = await Promise.all([limiter.consume('a'), limiter.consume('a'), limiter.consume('a')]);
    assert.deepEqual(
      held.map((d) => d.allowed),
      [true, true, true],
    );
    await held[0]?.release?.();
    // One slot came back: exactly one lease was taken off, so one more request fits, and no second.
    assert.equal((await limiter.consume('a')).allowed, true);
    assert.equal((await limiter.consume('a')).allowed, false);
  });
  it('decides each of more limiters than the engine keeps parsed specs of by its own policy', async () => {
    // The engine keeps 256 limiters' specs parsed and then starts again: every limiter, before and after, must be
    // decided by its own capacity, never by a spec kept for another.
    const limiters = Array.from({ length: 300 }, (_, i) =>
      createLimiter({ policy: tokenBucket({ capacity: i + 1, refillPerSecond: 1 }), store: redis }),
    );
    for (const round of [1, 2]) {
      const remaining = [];
      for (const limiter of limiters) remaining.push((await limiter.consume(`spec-${round}`)).remaining);
      assert.deepEqual(
        remaining,
        limiters.map((_, i) => i),
      );
    }
  });
});
