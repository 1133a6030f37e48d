// Each key's TTL on a real Redis, read right after the write: the time its state needs to come to rest, plus the
// padding, rounded up to a quantum (a second, or an eighth of the padding) and kept while it still covers the state,
// within the least and greatest TTL. Too short would forget spent quota; too long would waste memory.
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
          Number(await redisCall(server.host, server.port, ['PTTL', `tg:${key}`])),
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

  describe('the TTL is the state time to rest, rounded up to the second without padding', () => {
    it('fixed window: until the window ends, set once per window', async () => {
      const { clock, limiter, pttls } = setup(fixedWindow({ limit: 5, windowMs: 10_000 }));
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 10_000, 'a new window');
      clock.now += 3000;
      await limiter.consume('a');
      // Set again, it would be the 7 s left on the injected clock; kept, it is the first write's 10 s.
      near((await pttls('a'))[0] as number, 10_000, 'later in the same window');
    });

    it('with a greatest TTL, every write sets it from the clock', async () => {
      const { clock, limiter, pttls } = setup(fixedWindow({ limit: 5, windowMs: 10_000 }), {
        maxTtlSeconds: 60,
      });
      await limiter.consume('a');
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
      // The second window began at 10 s; its count weighs until 30 s, 18 s from now: the 20 s the key still has (on
      // the server's clock, which hardly moved) cover it. Kept.
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 20_000, 'the second window');
    });

    it('token bucket: until the bucket is full again, moved only when that passes the expiry', async () => {
      const { clock, limiter, pttls } = setup(tokenBucket({ capacity: 5, refillPerSecond: 2 }));
      await limiter.consume('a');
      near((await pttls('a'))[0] as number, 1000, 'one token spent: full in 0.5 s, rounded up');
      clock.now += 400;
      await limiter.consume('a');
      // Full again at 1 s, which the expiry already covers: kept (set again, it would be the 0.6 s left).
      near((await pttls('a'))[0] as number, 1000, 'a token within the expiry');
      await limiter.consume('a', { cost: 2 });
      near((await pttls('a'))[0] as number, 1600, 'full again at 2 s, 1.6 s from now');
      clock.now += 1100;
      await limiter.consume('a');
      // Full again at 2.5 s, rounded up to 3 s: 1.5 s from now, which the 1.6 s the key still has (on the server's
      // clock, which hardly moved) covers. Kept.
      near((await pttls('a'))[0] as number, 1600, 'after a partial refill');
      await limiter.consume('a', { cost: 2 });
      // Full again at 3.5 s, rounded up to 4 s: 2.5 s from now, more than the key has. Set.
      near((await pttls('a'))[0] as number, 2500, 'past the expiry');
    });

    it('a refund that brings the state to rest sets an expiry Redis accepts', async () => {
      for (const maxTtlSeconds of [undefined, 60]) {
        const { limiter, pttls } = setup(
          tokenBucket({ capacity: 5, refillPerSecond: 2 }),
          maxTtlSeconds === undefined ? {} : { maxTtlSeconds },
        );
        const spent = await limiter.consume('a');
        // Right away, the refund hands back all the bucket owes: full again now, a rest of 0 ms.
        await limiter.refund('a', { spent });
        assert.equal((await limiter.peek('a', { cost: 0 })).remaining, 5);
        const ttl = (await pttls('a'))[0] as number;
        // -1 (no TTL) or -2 (no key) would be wrong too: the state is kept, and comes to rest now.
        assert.ok(ttl >= 0 && ttl <= 1000, `an expiry of at most the quantum: ${ttl}`);
      }
    });

    it('a bucket that never refills: no TTL at all, even with a least TTL set', async () => {
      const { limiter, pttls } = setup(tokenBucket({ capacity: 5, refillPerSecond: 0 }), {
        minTtlSeconds: 60,
      });
      await limiter.consume('a');
      assert.deepEqual(await pttls('a'), [-1]);
    });

    it('a limit changed under the same scope: its keys get the TTL the new limit needs', async () => {
      const { limiter, pttls } = setup(fixedWindow({ limit: 5, windowMs: 10_000 }));
      await limiter.consume('a');
      // The same scope and key, a longer window: the open window now ends 600 s after it opened.
      const longer = createLimiter({
        policy: fixedWindow({ limit: 5, windowMs: 600_000 }),
        store: stores.at(-1) as RedisStore,
        scope: limiter.scope,
      });
      assert.equal((await longer.consume('a')).remaining, 3);
      near((await pttls('a'))[0] as number, 600_000, 'the longer window');
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
      // Rounded up to the quantum, an eighth of the padding: 7.5 s.
      near((await pttls('a'))[0] as number, 75_000, 'padded');
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
      // With a greatest TTL every write sets the TTL from the clock, so a write here would show as 6 s.
      const { clock, limiter, pttls } = setup(fixedWindow({ limit: 1, windowMs: 10_000 }), {
        maxTtlSeconds: 60,
      });
      await limiter.consume('a');
      clock.now += 4000;
      assert.equal((await limiter.consume('a')).allowed, false);
      await limiter.peek('a', { cost: 0 });
      // Still the first write's 10 s (on the server's real clock), not the 6 s left on the injected one.
      near((await pttls('a'))[0] as number, 10_000, 'untouched');
    });
  });
});
