// A policy kind the library does not ship (test/fixtures/leaky-bucket.ts), with three parameters and a state of
// two numbers: decided by both engines alike, with no edit anywhere but its own file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createLimiter, fixedWindow, MemoryStore } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { TestClock } from '../../src/testing/test-clock.js';
import { runDifferential } from '../contract/differential.js';
import { leakyBucket } from '../fixtures/leaky-bucket.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const leaky = fc
  .record({
    capacity: fc.integer({ min: 0, max: 12 }),
    leak: fc.integer({ min: 1, max: 4 }),
    everyMs: fc.integer({ min: 1, max: 5_000 }),
  })
  .map((options) => leakyBucket(options));

describeWithRedis('a policy kind of its own', () => {
  runDifferential(
    'RedisStore, a leaky bucket alone and beside a window',
    async (options) => {
      const server = await startRedisServer();
      const store = new RedisStore({ url: server.url, commandTimeoutMs: 5000, ...options });
      const close = async () => {
        await store.close();
        await server.stop();
      };
      return { store, close };
    },
    {
      numRuns: 60,
      policies: fc.oneof(
        leaky.map((policy) => [policy]),
        fc
          .tuple(leaky, fc.integer({ min: 0, max: 12 }))
          .map(([policy, limit]) => [policy, fixedWindow({ limit, windowMs: 10_000, name: 'rate' })]),
      ),
    },
  );

  describe('on one limiter', () => {
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

    it('fills, leaks a tick at a time, and says when the next request fits, the same in memory and Redis', async () => {
      const policy = leakyBucket({ capacity: 3, leak: 2, everyMs: 1_000 });
      const memory = createLimiter({ policy, store: new MemoryStore({ clock: clock.read }), scope: 'leaky' });
      const remote = createLimiter({ policy, store: redis, scope: 'leaky' });
      const seen: unknown[][] = [];
      for (const dt of [0, 0, 0, 0, 999, 1, 0, 0, 0]) {
        clock.now += dt;
        const pair = await Promise.all([memory.consume('client'), remote.consume('client')]);
        // An admission tells no retry.
        seen.push(pair.map(({ allowed, remaining, retryAfterMs }) => [allowed, remaining, retryAfterMs]));
      }
      for (const [m, r] of seen) assert.deepEqual(r, m);
      assert.deepEqual(
        seen.map(([m]) => m),
        [
          [true, 2, undefined],
          [true, 1, undefined],
          [true, 0, undefined],
          [false, 0, 1000],
          [false, 0, 1],
          // A tick leaks two units: two more fit, then none until the next tick.
          [true, 1, undefined],
          [true, 0, undefined],
          [false, 0, 1000],
          [false, 0, 1000],
        ],
      );
    });
  });
});
