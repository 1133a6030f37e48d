// The local deny cache: a flood past the limit costs (almost) no Redis commands, and it never rejects a request
// that Redis would have allowed.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import {
  type AnyPolicy,
  createLimiter,
  fixedWindow,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';
import { bucketKeys } from '../../src/stores/key.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { TestClock } from '../../src/testing/test-clock.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

async function scriptCalls(server: RedisServer): Promise<number> {
  const stats = await server.command('INFO', 'commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/cmdstat_(?:fcall|evalsha|eval):calls=(\d+)/g))
    calls += Number(match[1]);
  return calls;
}

describeWithRedis('local deny cache', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => server.stop());

  it('answers a flooding client locally until its exact retry time', async (t) => {
    const clock = new TestClock();
    const store = new RedisStore({ url: server.url, clock: clock.read, commandTimeoutMs: 5000 });
    t.after(() => store.close());
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 10, refillPerSecond: 1 }), store });
    for (let i = 0; i < 10; i++) assert.equal((await limiter.consume('flood')).allowed, true);
    const before = await scriptCalls(server);
    // The first denial must come back from Redis before there is anything to remember.
    const first = await limiter.consume('flood');
    const flood = [
      first,
      ...(await Promise.all(Array.from({ length: 2000 }, () => limiter.consume('flood')))),
    ];
    const commands = (await scriptCalls(server)) - before;
    assert.ok(flood.every((d) => !d.allowed && d.retryAfterMs === 1000));
    assert.ok(commands >= 1, 'the first denial was Redis’s');
    assert.ok(commands / flood.length <= 0.01, `${commands} Redis commands for ${flood.length} rejections`);
    clock.now += 999;
    assert.equal((await limiter.consume('flood')).retryAfterMs, 1, 'the cached wait ages with time');
    clock.now += 1;
    assert.equal((await limiter.consume('flood')).allowed, true, 'and ends exactly at the retry time');
  });

  it('forgets a key on a local reset', async (t) => {
    const store = new RedisStore({ url: server.url, commandTimeoutMs: 5000 });
    // Closed even when an assertion fails, so a failure is reported rather than left hanging on the connection.
    t.after(() => store.close());
    const limiter = createLimiter({ policy: fixedWindow({ limit: 1, windowMs: '1h' }), store });
    await limiter.consume('r');
    assert.equal((await limiter.consume('r')).allowed, false);
    await limiter.reset('r');
    assert.equal((await limiter.consume('r')).allowed, true);
    // Several clients' keys reset in one call (as admin tooling does) are all forgotten, not only the first.
    for (const id of ['s', 't']) {
      await limiter.consume(id);
      assert.equal((await limiter.consume(id)).allowed, false);
    }
    await store.reset(['s', 't'].flatMap((id) => bucketKeys(limiter.scope, id, limiter.policies)));
    for (const id of ['s', 't']) assert.equal((await limiter.consume(id)).allowed, true, id);
  });

  it('never rejects what Redis would allow, on random traces', async () => {
    const clock = new TestClock();
    const cached = new RedisStore({ url: server.url, clock: clock.read, commandTimeoutMs: 5000 });
    const direct = new RedisStore({
      url: server.url,
      clock: clock.read,
      localDenyCache: 0,
      commandTimeoutMs: 5000,
    });
    let traces = 0;
    const policy: fc.Arbitrary<AnyPolicy> = fc.oneof(
      fc
        .record({ capacity: fc.integer({ min: 1, max: 8 }), refillPerSecond: fc.constantFrom(0.5, 1, 5, 50) })
        .map(tokenBucket),
      fc
        .record({ limit: fc.integer({ min: 1, max: 8 }), windowMs: fc.integer({ min: 10, max: 5000 }) })
        .map(fixedWindow),
      fc
        .record({ limit: fc.integer({ min: 1, max: 8 }), windowMs: fc.integer({ min: 10, max: 5000 }) })
        .map(slidingWindow),
      fc
        .record({ limit: fc.integer({ min: 1, max: 8 }), windowMs: fc.integer({ min: 10, max: 5000 }) })
        .map(slidingWindowCounter),
    );
    const step = fc.record({ dt: fc.integer({ min: 0, max: 700 }), cost: fc.integer({ min: 1, max: 3 }) });
    try {
      await fc.assert(
        fc.asyncProperty(policy, fc.array(step, { minLength: 1, maxLength: 40 }), async (p, steps) => {
          traces++;
          const a = createLimiter({ policy: p, store: cached, scope: `cached-${traces}` });
          const b = createLimiter({ policy: p, store: direct, scope: `direct-${traces}` });
          for (const { dt, cost } of steps) {
            clock.now += dt;
            const [x, y] = [await a.consume('id', { cost }), await b.consume('id', { cost })];
            assert.equal(x.allowed, y.allowed);
            assert.equal(x.retryAfterMs, y.retryAfterMs);
          }
        }),
        { numRuns: 150 },
      );
      assert.ok(cached.metrics.localDenials > 0, 'the property exercised the cache');
    } finally {
      await Promise.all([cached.close(), direct.close()]);
    }
  });
  it('answers only the limits that were denied: a limiter with other limits on the same buckets asks Redis', async (t) => {
    // A rate limit service reloads its configuration into new limiters over the same scope, so that counts survive
    // a raised limit; a denial remembered under the old limit must not outlive it.
    const store = new RedisStore({ url: server.url, commandTimeoutMs: 5000 });
    t.after(() => store.close());
    const scope = 'raised';
    const low = createLimiter({ policy: fixedWindow({ limit: 2, windowMs: '1h' }), store, scope });
    const high = createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '1h' }), store, scope });
    for (let i = 0; i < 2; i++) assert.equal((await low.consume('client')).allowed, true);
    assert.equal((await low.consume('client')).allowed, false);
    assert.equal((await low.consume('client')).allowed, false, 'the denial is remembered for the old limits');
    const raised = await high.consume('client');
    assert.equal(raised.allowed, true, 'the raised limit admits at once');
    assert.equal(raised.remaining, 2, 'from the count the old limits left');
  });
});
