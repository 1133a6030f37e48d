// The failure log of a RedisStore that cannot reach Redis: its wording in each mode, what a throttled line says of the
// lines it held back, and a logger that throws changing no decision, no count, and crashing nothing.
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createLimiter, type Decision, type Limiter, tokenBucket } from '../../src/index.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { TestClock } from '../../src/testing/test-clock.js';
import { scriptsOnlyClient } from '../harness/planted-client.js';
import { freePorts, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const INTERVAL_MS = 1000;
const OPEN = '[tollgate] Redis unusable; failing open (requests allowed unchecked)';
const CLOSED = '[tollgate] Redis unusable; failing closed (requests denied)';
const FALLBACK =
  '[tollgate] Redis unusable; the memory fallback decides (each process enforcing its share of each limit)';
const FALLBACK_FAILED_OPEN =
  '[tollgate] the memory fallback failed; failing open (requests allowed unchecked) instead';
const FALLBACK_FAILED_CLOSED =
  '[tollgate] the memory fallback failed; failing closed (requests denied) instead';

/** A policy `fallbackShare: 0.01` cannot scale: what a limiter is refused at wire-up, reached here by a direct call. */
const yearly = () => tokenBucket({ capacity: 1, refillPerSecond: 1 / (365 * 86_400) });

/** Every line logged, and how (`error` or `warn`); the message is the last argument, as pino takes an error first. */
function recordingLogger() {
  const lines: { level: string; message: string; error: unknown }[] = [];
  const record =
    (level: string) =>
    (...args: unknown[]) => {
      lines.push({ level, message: String(args.at(-1)), error: args.length > 1 ? args[0] : undefined });
    };
  return { lines, logger: { warn: record('warn'), error: record('error') } };
}

const throwing = {
  warn: () => {
    throw new Error('the logger broke (warn)');
  },
  error: () => {
    throw new Error('the logger broke (error)');
  },
};

describe('the failure log of a RedisStore on a dead port', () => {
  const stores: RedisStore[] = [];
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  after(() => process.off('unhandledRejection', onRejection));
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  /** A store whose Redis is a port nothing listens on: every script call fails, fast, on a clock the test sets. */
  async function deadStore(options: Partial<RedisStoreOptions> = {}) {
    const [port] = await freePorts(1);
    const clock = new TestClock();
    const store = new RedisStore({
      url: `redis://127.0.0.1:${port}`,
      // Short budgets keep the suite fast: a refused connection and one that times out fail a call alike.
      connectTimeoutMs: 100,
      commandTimeoutMs: 100,
      reconnectCooldownMs: 60_000,
      breakerThreshold: 1000,
      logIntervalMs: INTERVAL_MS,
      clock: clock.read,
      ...options,
    });
    stores.push(store);
    return { store, clock };
  }

  /** Lets an unhandled rejection of the work just done be reported before it is checked for. */
  async function noUnhandledRejection() {
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(rejections.splice(0), []);
  }

  for (const [name, options, limiterFailOpen, expected] of [
    ['fail open', { failOpen: true }, undefined, OPEN],
    ['fail closed', { failOpen: false }, undefined, CLOSED],
    ['a limiter with failOpen: false on a fail-open store', { failOpen: true }, false, CLOSED],
    ["fallback: 'memory'", { fallback: 'memory' }, undefined, FALLBACK],
  ] as const) {
    it(`${name}: one error line, worded "${expected}: <error>"`, async () => {
      const { lines, logger } = recordingLogger();
      const { store } = await deadStore({ ...options, logger });
      const limiter = createLimiter({
        policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }),
        store,
        ...(limiterFailOpen === undefined ? {} : { failOpen: limiterFailOpen }),
      });
      await limiter.consume('a');
      await limiter.consume('a');
      assert.equal(lines.length, 1, 'the second failure is held back');
      const [line] = lines;
      assert.equal(line?.level, 'error');
      assert.ok(line?.message.startsWith(`${expected}: `), line?.message);
      assert.ok((line?.message.length ?? 0) > expected.length + 2, 'the error follows');
    });
  }

  it('a line released by the throttle counts the held-back calls by the mode that answered them', async () => {
    const { lines, logger } = recordingLogger();
    const { store, clock } = await deadStore({ failOpen: true, logger });
    const policy = tokenBucket({ capacity: 5, refillPerSecond: 1 });
    const open = createLimiter({ policy, store, scope: 'open' });
    const closed = createLimiter({ policy, store, scope: 'closed', failOpen: false });
    await open.consume('a');
    await closed.consume('b');
    await closed.consume('b');
    await open.consume('a');
    clock.now += INTERVAL_MS - 1;
    await open.consume('a');
    clock.now += 1;
    await closed.consume('b');
    await open.consume('a');
    clock.now += INTERVAL_MS;
    await open.consume('a');
    const messages = lines.map(({ message }) => message.replace(/\): .*$/, ')'));
    assert.deepEqual(messages, [
      OPEN,
      `${CLOSED} (4 more since the last report: failing closed 2, failing open 2)`,
      `${OPEN} (1 more since the last report: failing open 1)`,
    ]);
    assert.equal(store.metrics.errors, 8);
  });

  it('a logger that throws: every decision answered by the fail mode, counted once, nothing unhandled', async () => {
    const { store } = await deadStore({ failOpen: true, logger: throwing, breakerThreshold: 3 });
    const policy = tokenBucket({ capacity: 5, refillPerSecond: 1 });
    const open = createLimiter({ policy, store, scope: 'open' });
    const closed = createLimiter({ policy, store, scope: 'closed', failOpen: false });
    const decisions: Decision[] = [];
    // Each limiter's decisions of one turn share one script call.
    const consumeTwice = async (limiters: Limiter[]) =>
      decisions.push(...(await Promise.all(limiters.flatMap((l) => [l.consume('x'), l.consume('y')]))));
    await consumeTwice([open]);
    await noUnhandledRejection();
    // The third failed call opens the breaker (a warning that throws); from then on decisions skip Redis.
    await consumeTwice([open, closed]);
    await noUnhandledRejection();
    assert.equal(store.breakerOpen, true);
    await consumeTwice([open, closed]);
    await noUnhandledRejection();
    const both = ['fail-open', 'fail-open', 'fail-closed', 'fail-closed'];
    assert.deepEqual(
      decisions.map((d) => d.degraded),
      ['fail-open', 'fail-open', ...both, ...both],
    );
    assert.ok(decisions.every((d) => d.allowed === (d.degraded === 'fail-open')));
    const { degradedAllowed, degradedDenied, decisions: made, errors, breakerTrips } = store.metrics;
    assert.deepEqual(
      { degradedAllowed, degradedDenied, made, errors, breakerTrips },
      {
        degradedAllowed: 6,
        degradedDenied: 4,
        made: 0,
        errors: 3,
        breakerTrips: 1,
      },
    );
  });

  it('a fallback that throws: the fail mode answers, in a batch and while the breaker is open alike, and says so', async () => {
    const { lines, logger } = recordingLogger();
    const { store, clock } = await deadStore({
      fallback: 'memory',
      fallbackShare: 0.01,
      breakerThreshold: 1,
      logger,
    });
    const request = { scope: 'direct', id: 'k', policies: [yearly()], cost: 1, action: 'consume' as const };
    // The limiter would refuse these policies at wire-up: only a direct call of the store reaches the fallback.
    const batched = await store.evaluate(request);
    assert.equal(store.breakerOpen, true);
    const atOnce = await store.evaluate({ ...request, failOpen: false });
    clock.now += INTERVAL_MS;
    const released = await store.evaluate({ ...request, failOpen: false });
    assert.deepEqual(
      [batched, atOnce, released].map((r) => [r.degraded, r.allowed]),
      [
        ['fail-open', true],
        ['fail-closed', false],
        ['fail-closed', false],
      ],
    );
    const fallbackLines = lines.filter(({ message }) => message.includes('memory fallback failed'));
    assert.deepEqual(
      fallbackLines.map(({ message }) => message),
      [FALLBACK_FAILED_OPEN, `${FALLBACK_FAILED_CLOSED} (1 more since the last report: failing closed 1)`],
    );
    assert.ok(fallbackLines.every(({ level, error }) => level === 'error' && error instanceof Error));
    const { degradedAllowed, degradedDenied, fallbackDecisions } = store.metrics;
    assert.deepEqual(
      { degradedAllowed, degradedDenied, fallbackDecisions },
      {
        degradedAllowed: 1,
        degradedDenied: 2,
        fallbackDecisions: 0,
      },
    );
    // The failed call is reported as what answered it: the fail mode, not the fallback.
    assert.ok(lines.some(({ message }) => message.startsWith(`${OPEN}: `)));
  });
});

describeWithRedis('a logger that throws when some decisions of a script call fail', () => {
  it('answers each decision once: Redis makes the ones it can, the fail mode answers the rest', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    const server = await startRedisServer();
    // As a script: Redis refuses a whole function call that may write when out of memory (refused-writes.test.ts),
    // but runs a script and fails only the writes inside it, which is how one call comes to fail some decisions.
    const client = scriptsOnlyClient(new Redis(server.url));
    const store = new RedisStore({ client, failOpen: false, logger: throwing, localDenyCache: 0 });
    try {
      const limiter = createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 0 }), store });
      assert.equal((await limiter.consume('spent')).allowed, true);
      // Out of memory: a decision that would write fails inside the script, one that writes nothing (a denial) is
      // still made, and both share one script call.
      await server.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
      await server.command('CONFIG', 'SET', 'maxmemory', '1');
      // The failing decision first: the ones after it in the call are still made.
      const [bad, good] = await Promise.all([limiter.consume('fresh'), limiter.consume('spent')]);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual([good?.degraded, good?.allowed], [undefined, false]);
      assert.deepEqual([bad?.degraded, bad?.allowed], ['fail-closed', false]);
      const { decisions, degradedAllowed, degradedDenied, errors } = store.metrics;
      assert.deepEqual(
        { decisions, degradedAllowed, degradedDenied, errors },
        {
          decisions: 2,
          degradedAllowed: 0,
          degradedDenied: 1,
          errors: 1,
        },
      );
      assert.deepEqual(rejections, []);
    } finally {
      process.off('unhandledRejection', onRejection);
      await store.close();
      client.disconnect();
      await server.stop();
    }
  });
});
