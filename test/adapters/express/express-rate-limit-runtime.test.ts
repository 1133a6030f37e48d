// tollgate/express-rate-limit beyond the request sequences: its stores read directly beside express-rate-limit's,
// store failures, Tollgate stores given as `store`, and what differs on purpose.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it, mock } from 'node:test';
import express, { type RequestHandler } from 'express';
import * as erl from 'express-rate-limit';
import * as ours from '../../../src/adapters/express/express-rate-limit/index.js';
import { MemoryStore as TollgateMemoryStore } from '../../../src/stores/memory/memory-store.js';
import { quiet, serve, T0, unreachable } from './express-rate-limit-harness.js';
import { forgeryTable, SETTINGS } from './trust-proxy-forgery.js';

const { rateLimit, tollgateStore } = ours;
const MINUTE = 60_000;
const options = { windowMs: MINUTE } as ours.Options;

/**
 * One walk through a store's reads and writes on the mocked clock, each read recorded as it was then
 * (express-rate-limit's MemoryStore answers with its live record).
 */
async function walk(store: ours.Store, [a, b]: readonly [string, string] = ['a', 'b']): Promise<unknown[]> {
  mock.timers.enable({ apis: ['Date'], now: T0 });
  try {
    await store.init?.(options);
    const seen: unknown[] = [];
    const note = (...reads: (ours.ClientRateLimitInfo | undefined)[]) =>
      seen.push(...reads.map((read) => (read === undefined ? read : asRead(read))));
    note(await store.get?.(a));
    await store.increment(a);
    mock.timers.tick(1000);
    note(await store.increment(a), await store.get?.(a));
    await store.decrement(a);
    await store.decrement(a);
    await store.decrement(a);
    note(await store.get?.(a));
    note(await store.increment(b));
    await store.decrement(b);
    note(await store.get?.(b));
    mock.timers.tick(MINUTE);
    note(await store.get?.(a), await store.increment(a));
    await store.resetKey(a);
    note(await store.get?.(a));
    return seen;
  } finally {
    mock.timers.reset();
  }
}

/** A read as it was then, its window end in epoch ms (the mocked clock's dates are of its own class). */
function asRead({ totalHits, resetTime }: ours.ClientRateLimitInfo) {
  return { totalHits, resetTime: resetTime?.getTime() };
}

describe('tollgate/express-rate-limit stores read as express-rate-limit MemoryStore', () => {
  it('MemoryStore and a Tollgate store given as store: the same hits, window ends, and a window emptied by decrement', async () => {
    const expected = await walk(new erl.MemoryStore() as never);
    // Every hit given back: the window stays, with 0 hits, in the same millisecond as later.
    assert.deepEqual(expected[3], { totalHits: 0, resetTime: T0 + MINUTE });
    assert.deepEqual(expected[5], { totalHits: 0, resetTime: T0 + 1000 + MINUTE });
    assert.deepEqual(await walk(new ours.MemoryStore()), expected);
    const counted = new TollgateMemoryStore({ clock: () => Date.now(), autoCleanup: false });
    assert.deepEqual(await walk(tollgateStore(counted)), expected);
  });

  it('an empty key and a number are keys like any other: counted, given back, read and reset', async () => {
    const keys = ['', 7 as unknown as string] as const;
    const expected = await walk(new erl.MemoryStore() as never, keys);
    assert.deepEqual(expected[0], undefined);
    assert.deepEqual(await walk(new ours.MemoryStore(), keys), expected);
    const counted = new TollgateMemoryStore({ clock: () => Date.now(), autoCleanup: false });
    assert.deepEqual(await walk(tollgateStore(counted), keys), expected);
  });

  it('getKey and resetKey on the middleware reach the store', async () => {
    const store = new ours.MemoryStore();
    const limiter = rateLimit({ limit: 1, store });
    const app = await serve(limiter as RequestHandler);
    try {
      await app.get();
      assert.equal((await limiter.getKey('::ffff:127.0.0.1'))?.totalHits, undefined);
      assert.equal((await limiter.getKey('127.0.0.1'))?.totalHits, 1);
      await limiter.resetKey('127.0.0.1');
      assert.equal(await limiter.getKey('127.0.0.1'), undefined);
    } finally {
      await app.close();
      store.shutdown();
    }
  });
});

describe('tollgate/express-rate-limit: draft-8 fields of stacked limiters', () => {
  it('each limiter appends its policy to RateLimit and RateLimit-Policy', async () => {
    const draft8 = { standardHeaders: 'draft-8', legacyHeaders: false } as const;
    const app = await serve([
      rateLimit({ windowMs: 15 * MINUTE, limit: 100, ...draft8 }),
      rateLimit({ windowMs: MINUTE, limit: 5, ...draft8 }),
    ] as never);
    try {
      const { headers } = await app.get();
      assert.equal(headers.get('ratelimit'), '"100-in-15min"; r=99; t=900, "5-in-1min"; r=4; t=60');
      assert.match(
        headers.get('ratelimit-policy') ?? '',
        /^"100-in-15min"; q=100; w=900; pk=:.+:, "5-in-1min"; q=5; w=60; pk=:.+:$/,
      );
    } finally {
      await app.close();
    }
  });
});

describe('tollgate/express-rate-limit: store failures', () => {
  const failing = () => ({
    increment: async () => {
      throw new Error('down');
    },
    decrement: async () => undefined,
    resetKey: async () => undefined,
  });
  for (const [name, store] of [
    ['an express-rate-limit store that throws', failing],
    ['a Tollgate store that cannot reach its data', unreachable],
  ] as const)
    it(`${name}: an Express error, or under passOnStoreError a pass, logged where express-rate-limit logs it`, async () => {
      const closed = await serve(rateLimit({ limit: 1, store: store() as never }));
      try {
        assert.equal((await closed.get()).status, 500);
        assert.equal(closed.errors.length, 1);
      } finally {
        await closed.close();
      }
      const logger = quiet();
      const open = await serve(
        rateLimit({ limit: 1, store: store() as never, passOnStoreError: true, logger }),
      );
      try {
        const { status, body } = await open.get();
        assert.deepEqual([status, body], [200, { figures: null }]);
        assert.equal(
          logger.error.mock.calls[0]?.arguments[1],
          'express-rate-limit: error from store, allowing request without rate-limiting.',
        );
      } finally {
        await open.close();
      }
    });

  it('a store of express-rate-limit 5, with incr(key, callback), counts through promises', async () => {
    const hits = new Map<string, number>();
    const legacy = {
      incr: (
        key: string,
        done: (error: Error | undefined, hits: number, reset: Date | undefined) => void,
      ) => {
        hits.set(key, (hits.get(key) ?? 0) + 1);
        done(undefined, hits.get(key) ?? 0, undefined);
      },
      decrement: () => undefined,
      resetKey: (key: string) => void hits.delete(key),
    };
    const app = await serve(rateLimit({ limit: 1, store: legacy }));
    try {
      assert.deepEqual([(await app.get()).status, (await app.get()).status], [200, 429]);
    } finally {
      await app.close();
    }
  });

  it('an invalid logger or store throws a TypeError at wire-up, as in express-rate-limit', () => {
    for (const make of [erl.rateLimit, rateLimit] as const) {
      assert.throws(() => make({ logger: { warn: () => undefined } as never }), TypeError);
      assert.throws(() => make({ store: { increment: () => undefined } as never }), TypeError);
    }
  });
});

describe('tollgate/express-rate-limit: on purpose unlike express-rate-limit', () => {
  it('a keyGenerator giving a number, with draft-8: limited by its string form (express-rate-limit answers 500)', async () => {
    const make = (limit: typeof rateLimit) =>
      limit({ limit: 1, standardHeaders: 'draft-8', keyGenerator: () => 7 as never });
    const theirs = await serve(make(erl.rateLimit as never));
    const mine = await serve(make(rateLimit));
    try {
      assert.equal((await theirs.get()).status, 500);
      assert.deepEqual([(await mine.get()).status, (await mine.get()).status], [200, 429]);
    } finally {
      await Promise.all([theirs.close(), mine.close()]);
    }
  });

  it('trust proxy counting more proxies than the request passed: ERR_ERL_PERMISSIVE_TRUST_PROXY (express-rate-limit warns of true only)', async () => {
    const logger = quiet();
    const app = express();
    app.set('trust proxy', 3);
    app.use(rateLimit({ limit: 5, logger }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      await fetch(url, { headers: { 'x-forwarded-for': '203.0.113.1' } });
      await fetch(url, { headers: { 'x-forwarded-for': '203.0.113.2' } });
      const codes = logger.error.mock.calls.map((call) => (call.arguments[0] as { code: string }).code);
      assert.deepEqual(codes, ['ERR_ERL_PERMISSIVE_TRUST_PROXY']);
      assert.match(String(logger.error.mock.calls[0]?.arguments[0]), /forge/);
    } finally {
      server.close();
    }
  });

  it('ERR_ERL_PERMISSIVE_TRUST_PROXY exactly where a client-added X-Forwarded-For entry would be req.ip', async () => {
    const rows = await forgeryTable(express, SETTINGS, () => {
      const logger = quiet();
      return {
        handler: rateLimit({ limit: 5, logger }),
        warned: () =>
          logger.error.mock.calls.some(
            (call) => (call.arguments[0] as { code?: string }).code === 'ERR_ERL_PERMISSIVE_TRUST_PROXY',
          ),
      };
    });
    for (const row of rows) assert.equal(row.warned, row.believed, JSON.stringify(row));
  });

  it('ipKeyGenerator gives the keys express-rate-limit gives', () => {
    const addresses = [
      '1.2.3.4',
      '::ffff:1.2.3.4',
      '::1.2.3.4',
      '::1',
      '::',
      '2001:db8:1:2:3:4:5:6',
      'not an ip',
    ];
    for (const ip of addresses)
      for (const subnet of [undefined, false, 0, 32, 48, 56, 64, 100, 128] as const)
        assert.equal(ours.ipKeyGenerator(ip, subnet), erl.ipKeyGenerator(ip, subnet), `${ip} /${subnet}`);
    assert.throws(() => ours.ipKeyGenerator('2001:db8::1', 48.5));
    assert.throws(() => erl.ipKeyGenerator('2001:db8::1', 48.5));
  });
});
