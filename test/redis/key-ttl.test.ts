// Each key's TTL on a real Redis: the time its state needs to come to rest, plus the padding, rounded up to a quantum
// (a second, or an eighth of the padding) and kept while it still covers the state, within the least and greatest
// TTL. Too short would forget spent quota; too long would waste memory.
//
// Redis's real clock runs between a write and the read of its expiry, however little the injected clock moves, and
// on a loaded machine by a second or more. So each expiry is read as an instant (PEXPIRETIME, which does not shrink)
// and checked against the server's clock read just before and just after the write that set it; and every TTL and
// every margin that decides between keeping an expiry and setting one is a minute or more, beyond any such delay.
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
import { bucketKeys } from '../../src/stores/key.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { TestClock } from '../../src/testing/test-clock.js';
import { type RedisServer, redisCall, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

/** The server's clock (ms) just before and just after a step: any expiry the step set counts from between them. */
interface Span {
  readonly from: number;
  readonly to: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;

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

  /** The server's clock in whole ms, as Redis counts an expiry from it. */
  async function serverMs(): Promise<number> {
    const [seconds, micros] = (await redisCall(server.host, server.port, ['TIME'])) as [string, string];
    return Number(seconds) * SECOND + Math.floor(Number(micros) / 1000);
  }

  async function during(step: () => Promise<unknown>): Promise<Span> {
    const from = await serverMs();
    await step();
    return { from, to: await serverMs() };
  }

  /**
   * A limiter on its own store (no padding or least TTL unless given), its clock, and its keys' expiry instants.
   * The store waits as long as a loaded machine may need: a decision past its time budget would be answered by the
   * fail mode, writing nothing.
   */
  function setup(policy: AnyPolicy | AnyPolicy[], options: Partial<RedisStoreOptions> = {}) {
    const clock = new TestClock();
    const store = new RedisStore({
      url: server.url,
      clock: clock.read,
      minTtlSeconds: 0,
      ttlPaddingSeconds: 0,
      commandTimeoutMs: MINUTE,
      connectTimeoutMs: MINUTE,
      ...options,
    });
    stores.push(store);
    const limiter = createLimiter({ policy, store, scope: `ttl-${++scopes}` });
    /** Each key's expiry in server ms: -1 for none, -2 for no key. */
    const expiries = async (id: string) =>
      Promise.all(
        bucketKeys(limiter.scope, id, limiter.policies).map(async (key) =>
          Number(await redisCall(server.host, server.port, ['PEXPIRETIME', `tg:${key}`])),
        ),
      );
    const expiry = async (id: string) => (await expiries(id))[0] as number;
    return { clock, limiter, expiries, expiry };
  }

  /** An expiry that a write during `span` set to `ttlMs`. */
  function setTo(actual: number, span: Span, ttlMs: number, what: string): void {
    assert.ok(
      actual >= span.from + ttlMs && actual <= span.to + ttlMs,
      `${what}: expires ${actual - span.from} ms after the write began, expected ${ttlMs} (written within ${span.to - span.from} ms)`,
    );
  }

  describe('the TTL is the state time to rest, rounded up to the second without padding', () => {
    it('fixed window: until the window ends, set once per window', async () => {
      const { clock, limiter, expiry } = setup(fixedWindow({ limit: 5, windowMs: 10 * MINUTE }));
      const first = await during(() => limiter.consume('a'));
      const set = await expiry('a');
      setTo(set, first, 10 * MINUTE, 'a new window');
      clock.now += 3 * MINUTE;
      await limiter.consume('a');
      // Set again, it would be the 7 minutes left; kept, it is the first write's expiry.
      assert.equal(await expiry('a'), set, 'later in the same window');
    });

    it('with a greatest TTL, every write sets it from the clock', async () => {
      const { clock, limiter, expiry } = setup(fixedWindow({ limit: 5, windowMs: 10 * MINUTE }), {
        maxTtlSeconds: 3600,
      });
      await limiter.consume('a');
      clock.now += 3 * MINUTE;
      const later = await during(() => limiter.consume('a'));
      setTo(await expiry('a'), later, 7 * MINUTE, 'later in the same window');
    });

    it('sliding window log: until its newest entry leaves the window', async () => {
      const { clock, limiter, expiry } = setup(slidingWindow({ limit: 5, windowMs: 10 * MINUTE }));
      const first = await during(() => limiter.consume('a', { cost: 2 }));
      setTo(await expiry('a'), first, 10 * MINUTE, 'a first entry');
      clock.now += 4 * MINUTE;
      const newer = await during(() => limiter.consume('a'));
      setTo(await expiry('a'), newer, 10 * MINUTE, 'a newer entry');
      clock.now += 7 * MINUTE;
      // The first two entries have left; the newest still has 3 minutes to go, and a new one makes it 10 again.
      const partly = await during(() => limiter.consume('a'));
      setTo(await expiry('a'), partly, 10 * MINUTE, 'after part of the log expired');
    });

    it('sliding window counter: until the current window count stops weighing, a window after it ends', async () => {
      const { clock, limiter, expiry } = setup(slidingWindowCounter({ limit: 5, windowMs: 10 * MINUTE }));
      const first = await during(() => limiter.consume('a'));
      const set = await expiry('a');
      setTo(set, first, 20 * MINUTE, 'the first window');
      clock.now += 12 * MINUTE;
      // The second window began at 10 minutes; its count weighs until 30, 18 minutes from now: the 20 minutes the
      // key was given cover it. Kept.
      await limiter.consume('a');
      assert.equal(await expiry('a'), set, 'the second window');
    });

    it('token bucket: until the bucket is full again, moved only when that passes the expiry', async () => {
      // A token every 12.5 s, so that full-again times fall between seconds.
      const { clock, limiter, expiry } = setup(tokenBucket({ capacity: 10, refillPerSecond: 0.08 }));
      const first = await during(() => limiter.consume('a', { cost: 7 }));
      const set = await expiry('a');
      setTo(set, first, 88 * SECOND, 'seven tokens spent: full in 87.5 s, rounded up');
      clock.now += MINUTE;
      await limiter.consume('a');
      // Full again at 100 s, 40 s from now, which the 88 s the key was given cover: kept.
      assert.equal(await expiry('a'), set, 'a token within the expiry');
      const past = await during(() => limiter.consume('a', { cost: 5 }));
      // Full again at 162.5 s, rounded up to 163 s: 103 s from now, past the expiry. Set.
      const moved = await expiry('a');
      setTo(moved, past, 103 * SECOND, 'past the expiry');
      clock.now += 50 * SECOND;
      await limiter.consume('a');
      // Partly refilled, full again at 175 s: 65 s from now, which the 103 s the key was given cover. Kept.
      assert.equal(await expiry('a'), moved, 'after a partial refill');
    });

    it('a refund that brings the state to rest sets an expiry Redis accepts', async () => {
      // A token a minute: the consume gives the key a minute, which the refund keeps, its state at rest.
      const { limiter, expiry } = setup(tokenBucket({ capacity: 5, requestsPerMinute: 1 }));
      const spent = await limiter.consume('a');
      const set = await expiry('a');
      await limiter.refund('a', { spent });
      assert.equal((await limiter.peek('a', { cost: 0 })).remaining, 5);
      assert.equal(await expiry('a'), set, 'kept');

      // With a greatest TTL the refund sets the expiry from the clock: a rest of 0 ms, which Redis would refuse as
      // an expiry, becomes the least it accepts, 1 ms, so the key may be gone by the time it is read (-2). Never -1:
      // a key at rest kept for ever.
      const capped = setup(tokenBucket({ capacity: 5, requestsPerMinute: 1 }), { maxTtlSeconds: 3600 });
      const cappedSpent = await capped.limiter.consume('a');
      const refunded = await during(() => capped.limiter.refund('a', { spent: cappedSpent }));
      assert.equal((await capped.limiter.peek('a', { cost: 0 })).remaining, 5);
      const left = await capped.expiry('a');
      if (left !== -2) setTo(left, refunded, 1, 'at rest, with a greatest TTL');
    });

    it('a bucket that never refills: no TTL at all, even with a least TTL set', async () => {
      const { limiter, expiries } = setup(tokenBucket({ capacity: 5, refillPerSecond: 0 }), {
        minTtlSeconds: 60,
      });
      await limiter.consume('a');
      assert.deepEqual(await expiries('a'), [-1]);
    });

    it('a limit changed under the same scope: its keys get the TTL the new limit needs', async () => {
      const { limiter, expiry } = setup(fixedWindow({ limit: 5, windowMs: 10 * MINUTE }));
      await limiter.consume('a');
      // The same scope and key, a longer window: the open window now ends 10 hours after it opened.
      const longer = createLimiter({
        policy: fixedWindow({ limit: 5, windowMs: '10h' }),
        store: stores.at(-1) as RedisStore,
        scope: limiter.scope,
      });
      const changed = await during(async () => assert.equal((await longer.consume('a')).remaining, 3));
      setTo(await expiry('a'), changed, 600 * MINUTE, 'the longer window');
    });

    it('several policies: each key by its own state', async () => {
      const { limiter, expiries } = setup([
        tokenBucket({ capacity: 5, requestsPerMinute: 1, name: 'burst' }),
        fixedWindow({ limit: 100, windowMs: '1h', name: 'hourly' }),
      ]);
      const spent = await during(() => limiter.consume('a', { cost: 2 }));
      const [burst, hourly] = (await expiries('a')) as [number, number];
      setTo(burst, spent, 2 * MINUTE, 'the bucket');
      setTo(hourly, spent, 60 * MINUTE, 'the window');
    });
  });

  describe('within the bounds', () => {
    it('adds ttlPaddingSeconds to the time to rest', async () => {
      const { limiter, expiry } = setup(fixedWindow({ limit: 5, windowMs: 10_000 }), {
        ttlPaddingSeconds: 60,
      });
      const written = await during(() => limiter.consume('a'));
      // Rounded up to the quantum, an eighth of the padding: 7.5 s.
      setTo(await expiry('a'), written, 75 * SECOND, 'padded');
    });

    it('keeps a key at least minTtlSeconds', async () => {
      const { limiter, expiry } = setup(tokenBucket({ capacity: 5, refillPerSecond: 5 }), {
        minTtlSeconds: 300,
      });
      const written = await during(() => limiter.consume('a'));
      setTo(await expiry('a'), written, 5 * MINUTE, 'raised to the least TTL');
    });

    it('cuts the padding at maxTtlSeconds, never the time to rest', async () => {
      const { limiter, expiry } = setup(fixedWindow({ limit: 5, windowMs: 100_000 }), {
        ttlPaddingSeconds: 60,
        maxTtlSeconds: 120,
      });
      const written = await during(() => limiter.consume('a'));
      setTo(await expiry('a'), written, 2 * MINUTE, 'capped');
    });

    it('a denial and a peek leave the TTL as the last write set it', async () => {
      // With a greatest TTL every write sets the expiry from the clock, so a write here would move it 4 minutes
      // sooner.
      const { clock, limiter, expiry } = setup(fixedWindow({ limit: 1, windowMs: 10 * MINUTE }), {
        maxTtlSeconds: 3600,
      });
      await limiter.consume('a');
      const set = await expiry('a');
      clock.now += 4 * MINUTE;
      assert.equal((await limiter.consume('a')).allowed, false);
      await limiter.peek('a', { cost: 0 });
      assert.equal(await expiry('a'), set, 'untouched');
    });
  });
});
