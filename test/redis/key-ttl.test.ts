// Each key's TTL on a real Redis, read right after the write: the time its state needs to come to rest, plus the
// padding, within the least and greatest TTL. Too short would forget spent quota; too long would waste memory.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type AnyPolicy,
  createLimiter,
  fixedWindow,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';
import { bucketKeys } from '../../src/key.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { TestClock } from '../contract/store-contract.js';
import { type RedisServer, redisCall, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

/** The server's real clock runs between the write and the read: a PTTL may be this much below the TTL set. */
const READ_SLACK_MS = 250;

describeWithRedis('key TTLs on Redis', () => {
  let server: RedisServer;
  const stores: RedisStore[] = [];
  let scopes = 0;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await server.stop();
  });

  /** A limiter on its own store (no padding or least TTL unless given), its clock, and its keys' PTTLs. */
  function setup(policy: AnyPolicy | AnyPolicy[], options: Partial<RedisStoreOptions> = {}) {
    const clock = new TestClock();
    const store = new RedisStore({
      url: server.url,
      clock: clock.read,
      minTtlSeconds: 0,
      ttlPaddingSeconds: 0,
      ...options,
    });
    stores.push(store);
    const limiter = createLimiter({ policy, store, scope: `ttl-${++scopes}` });
    const pttls = async (id: string) =>
      Promise.all(
        bucketKeys(limiter.scope, id, limiter.policies).map(async (key) =>
          Number(await redisCall(server.host, server.port, ['PTTL', `ratelimit:${key}`])),
        ),
      );
    return { clock, limiter, pttls };
  }

  /** A PTTL read just after a write that set `ttlMs`. */
  function near(actual: number, ttlMs: number, what: string): void {
    assert.ok(
      actual <= ttlMs && actual > ttlMs - READ_SLACK_MS,
      `${what}: PTTL ${actual} ms, expected ${ttlMs}`,
    );
  }

  describe('the TTL is the state time to rest, in milliseconds', () => {
    it('fixed window: until the window ends', async () => {
      const { clock, limiter, pttls } = setup(fixedWindow({ limit: 5, windowMs: 10_000 }));
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 10_000, 'a new window');
      clock.now += 3000;
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 7000, 'later in the same window');
    });

    it('sliding window log: until its newest entry leaves the window', async () => {
      const { clock, limiter, pttls } = setup(slidingWindow({ limit: 5, windowMs: 10_000 }));
      await limiter.consume('a', { cost: 2 });
      near((await pttls('a'))[0] as number, 10_000, 'a first entry');
      clock.now += 4000;
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 10_000, 'a newer entry');
      clock.now += 7000;
      // The first two entries have left; the newest still has 3 s to go, and a new one makes it 10 s again.
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 10_000, 'after part of the log expired');
    });

    it('sliding window counter: until the current window count stops weighing, a window after it ends', async () => {
      const { clock, limiter, pttls } = setup(slidingWindowCounter({ limit: 5, windowMs: 10_000 }));
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 20_000, 'the first window');
      clock.now += 12_000;
      // The second window began at 10 s; its count weighs until 30 s, 18 s from now.
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 18_000, 'the second window');
    });

    it('token bucket: until the bucket is full again', async () => {
      const { clock, limiter, pttls } = setup(tokenBucket({ capacity: 5, refillPerSecond: 2 }));
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 500, 'one token spent');
      await limiter.consume('a', { cost: 3 });
      near((await pttls('a'))[0] as number, 2000, 'four tokens spent');
      clock.now += 1500;
      await limiter.consume('a');
      // 1 s of refill left after 1.5 s, plus 0.5 s for the new token.
      near((await pttls('a'))[0] as number, 1000, 'after a partial refill');
    });

    it('a bucket that never refills: no TTL at all, even with a least TTL set', async () => {
      const { limiter, pttls } = setup(tokenBucket({ capacity: 5, refillPerSecond: 0 }), {
        minTtlSeconds: 60,
      });
      await limiter.consume('a');
      assert.deepEqual(await pttls('a'), [-1]);
    });

    it('several policies: each key by its own state', async () => {
      const { limiter, pttls } = setup([
        tokenBucket({ capacity: 5, refillPerSecond: 1, name: 'burst' }),
        fixedWindow({ limit: 100, windowMs: '1h', name: 'hourly' }),
      ]);
      await limiter.consume('a', { cost: 2 });
      const [burst, hourly] = (await pttls('a')) as [number, number];
      near(burst, 2000, 'the bucket');
      near(hourly, 3_600_000, 'the window');
    });
  });

  describe('within the bounds', () => {
    it('adds ttlPaddingSeconds to the time to rest', async () => {
      const { limiter, pttls } = setup(fixedWindow({ limit: 5, windowMs: 10_000 }), {
        ttlPaddingSeconds: 60,
      });
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 70_000, 'padded');
    });

    it('keeps a key at least minTtlSeconds', async () => {
      const { limiter, pttls } = setup(tokenBucket({ capacity: 5, refillPerSecond: 5 }), {
        minTtlSeconds: 5,
      });
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 5000, 'raised to the least TTL');
    });

    it('cuts the padding at maxTtlSeconds, never the time to rest', async () => {
      const { limiter, pttls } = setup(fixedWindow({ limit: 5, windowMs: 100_000 }), {
        ttlPaddingSeconds: 60,
        maxTtlSeconds: 120,
      });
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 120_000, 'capped');
    });

    it('a denial and a peek leave the TTL as the last write set it', async () => {
      const { clock, limiter, pttls } = setup(fixedWindow({ limit: 1, windowMs: 10_000 }));
      await limiter.consume('a');
      clock.now += 4000;
      assert.equal((await limiter.consume('a')).allowed, false);
      await limiter.peek('a', { cost: 0 });
      // Still the first write's 10 s (on the server's real clock), not the 6 s left on the injected one.
      near((await pttls('a'))[0] as number, 10_000, 'untouched');
    });
  });
});
