// The storage call by call against @nestjs/throttler's ThrottlerStorageService, on random traffic: in memory and
// through the Lua twin on a real Redis, every figure of every answer the same.
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import fc from 'fast-check';
import {
  StoreThrottlerStorage,
  ThrottlerStorageService,
} from '../../../src/adapters/nestjs/throttler/index.js';
import {
  type ThrottlerState,
  throttlerPolicy,
} from '../../../src/adapters/nestjs/throttler/throttler-policy.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../../harness/redis-server.js';
import { describeWithRedis } from '../../harness/suite.js';
import { T0 } from './throttler-harness.js';
import { original } from './throttler-original.js';

/** One call: after `advanceMs`, a hit on `key` with these figures (a key keeps its throttler's name). */
interface Call {
  readonly advanceMs: number;
  readonly key: number;
  readonly ttl: number;
  readonly limit: number;
  readonly blockDuration: number;
}

const call = fc.record({
  // Durations exactly too: a hit, a window or a block ending at the very instant of a call.
  advanceMs: fc.oneof(
    fc.constant(0),
    fc.integer({ min: 1, max: 1500 }),
    fc.integer({ min: 1000, max: 9000 }),
    fc.constantFrom(700, 1000, 2500, 3000, 4000, 8000),
  ),
  key: fc.integer({ min: 0, max: 2 }),
  ttl: fc.constantFrom(1000, 2500, 4000),
  limit: fc.constantFrom(0, 1, 2, 3),
  blockDuration: fc.constantFrom(0, 700, 3000, 8000),
});
/** Runs of calls whose figures mostly stay put per key, as a route's do, and sometimes change. */
const runs = fc
  .array(call, { minLength: 1, maxLength: 40 })
  .map((calls) => calls.map((c, i) => (i % 7 === 6 ? c : { ...c, ...pick(calls, c.key) })));

function pick(calls: readonly Call[], key: number): Pick<Call, 'ttl' | 'limit' | 'blockDuration'> {
  const first = calls.find((c) => c.key === key) as Call;
  return { ttl: first.ttl, limit: first.limit, blockDuration: first.blockDuration };
}

/**
 * Both storages asked in turn on one mocked clock. A record's `timeToBlockExpire` while not blocked is left out:
 * @nestjs/throttler answers the seconds since an old block ended there, which its guard never reads.
 */
async function compare(calls: readonly Call[], ours: StoreThrottlerStorage): Promise<void> {
  const theirs = new original.ThrottlerStorageService();
  for (const [i, c] of calls.entries()) {
    mock.timers.tick(c.advanceMs);
    const args = [`key-${c.key}`, c.ttl, c.limit, c.blockDuration, `t${c.key}`] as const;
    const expected = await theirs.increment(...args);
    const actual = await ours.increment(...args);
    if (!expected.isBlocked) expected.timeToBlockExpire = 0;
    assert.deepEqual(actual, expected, `call ${i}: ${JSON.stringify(calls.slice(0, i + 1))}`);
  }
  theirs.onApplicationShutdown();
}

/**
 * The longest block there is, beside the original: the hit over the limit counted once and blocked for every second
 * of it (a block's seconds and the hits share one number in a store's answer), and a longer figure refused.
 */
async function atTheLongestBlock(ours: StoreThrottlerStorage): Promise<void> {
  mock.timers.enable({ apis: ['Date'], now: T0 });
  const theirs = new original.ThrottlerStorageService();
  try {
    for (const ttl of [1000, 2 ** 38]) {
      const args = [`key-${ttl}`, ttl, 2, 2 ** 38, 'long'] as const;
      for (let i = 0; i < 4; i++) {
        const expected = await theirs.increment(...args);
        if (!expected.isBlocked) expected.timeToBlockExpire = 0;
        assert.deepEqual(await ours.increment(...args), expected);
      }
      assert.deepEqual(await ours.increment(...args), {
        totalHits: 3,
        timeToExpire: Math.ceil(ttl / 1000),
        isBlocked: true,
        timeToBlockExpire: 274_877_907,
      });
    }
    await assert.rejects(
      ours.increment('k', 1000, 2, 2 ** 38 + 1, 'long'),
      /"long" throttler's "blockDuration"/,
    );
    await assert.rejects(ours.increment('k', 2 ** 38 + 1, 2, 0, 'long'), /"long" throttler's "ttl"/);
  } finally {
    theirs.onApplicationShutdown();
    mock.timers.reset();
  }
}

async function property(numRuns: number, storage: (run: number) => StoreThrottlerStorage): Promise<void> {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(runs, async (calls) => {
      mock.timers.enable({ apis: ['Date'], now: T0 });
      try {
        await compare(calls, storage(run++));
      } finally {
        mock.timers.reset();
      }
    }),
    { numRuns, seed: 20_301 },
  );
}

describe('StoreThrottlerStorage beside ThrottlerStorageService', () => {
  it('on a MemoryStore', async () => {
    const stores: MemoryStore[] = [];
    await property(300, () => {
      const store = new MemoryStore({ clock: () => Date.now(), autoCleanup: false });
      stores.push(store);
      return new StoreThrottlerStorage(store);
    });
    for (const store of stores) store.close();
  });

  it('counts throttlers apart, whatever their names', async () => {
    const storage = new StoreThrottlerStorage(new MemoryStore({ autoCleanup: false }));
    const names = ['per user!', 'per user?', 'x'.repeat(80)];
    for (const name of names)
      assert.equal((await storage.increment('k', 60_000, 1, 0, name)).isBlocked, false);
    for (const name of names)
      assert.equal((await storage.increment('k', 60_000, 1, 0, name)).isBlocked, true);
  });

  it('keeps a burst of one millisecond as one run of hits, whatever the limit', () => {
    const policy = throttlerPolicy(60_000, 1000, 0);
    let state: ThrottlerState | undefined;
    for (let i = 0; i < 500; i++) state = policy.evaluate(state, T0, 1).next;
    state = policy.evaluate(state, T0 + 1, 1).next;
    assert.deepEqual(state, [T0 + 60_000, 0, T0 + 60_000, 500, T0 + 60_001, 1]);
  });

  it('counts the longest block exactly', () =>
    atTheLongestBlock(
      new StoreThrottlerStorage(new MemoryStore({ clock: () => Date.now(), autoCleanup: false })),
    ));

  it('sweeps at the interval a subclass sets, from its first call', async (t) => {
    t.mock.timers.enable({ apis: ['Date', 'setInterval'], now: T0 });
    class EverySecond extends ThrottlerStorageService {
      protected override readonly sweepIntervalMs = 1000;
    }
    const storage = new EverySecond();
    const store = storage.store as MemoryStore;
    await storage.increment('k', 500, 5, 0, 'default');
    assert.equal(store.size, 1);
    t.mock.timers.tick(1000);
    assert.equal(store.size, 0);
    storage.onApplicationShutdown();
  });

  it('refuses figures it cannot count exactly, naming the throttler', async () => {
    const storage = new StoreThrottlerStorage(new MemoryStore({ autoCleanup: false }));
    await assert.rejects(storage.increment('k', 0, 1, 0, 'short'), /"short" throttler's "ttl"/);
    await assert.rejects(storage.increment('k', 1000, 1.5, 0, 'short'), /"limit"/);
  });
});

describeWithRedis('StoreThrottlerStorage on a RedisStore beside ThrottlerStorageService', () => {
  let server: RedisServer;
  const stores: RedisStore[] = [];
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    for (const store of stores) await store.close();
    await server.stop();
  });

  it('counts the longest block exactly through the Lua twin', () => {
    const store = new RedisStore({
      url: server.url,
      clock: () => Date.now(),
      keyPrefix: 'longest:',
      commandTimeoutMs: 5000,
    });
    stores.push(store);
    return atTheLongestBlock(new StoreThrottlerStorage(store));
  });

  it('keeps a burst of one millisecond as one run of hits, whatever the limit', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: T0 });
    const store = new RedisStore({
      url: server.url,
      clock: () => Date.now(),
      keyPrefix: 'runs:',
      commandTimeoutMs: 5000,
    });
    stores.push(store);
    const storage = new StoreThrottlerStorage(store);
    for (let i = 0; i < 500; i++) await storage.increment('k', 60_000, 1000, 0, 'burst');
    t.mock.timers.tick(1);
    const last = await storage.increment('k', 60_000, 1000, 0, 'burst');
    assert.equal(last.totalHits, 501);
    const [key] = (await server.command('KEYS', 'runs:*')).split('\n');
    assert.equal(
      await server.command('GET', key as string),
      `${T0 + 60_000}:0:${T0 + 60_000}*500,${T0 + 60_001}`,
    );
  });

  it('through the Lua twin', async () => {
    await property(60, (run) => {
      // A prefix per run: each run's clock starts again at T0.
      const store = new RedisStore({
        url: server.url,
        clock: () => Date.now(),
        keyPrefix: `run${run}:`,
        // A loaded machine must not turn a slow answer into the fail mode's.
        commandTimeoutMs: 5000,
      });
      stores.push(store);
      return new StoreThrottlerStorage(store);
    });
  });
});
