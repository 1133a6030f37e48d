// tollgate/express-rate-limit counting on Tollgate stores: which limiters share a counter, and what is reported
// when a store or a counter serves more than one.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import express, { type RequestHandler } from 'express';
import * as erl from 'express-rate-limit';
import * as ours from '../../../src/adapters/express/express-rate-limit/index.js';
import { MemoryStore as TollgateMemoryStore } from '../../../src/stores/memory/memory-store.js';
import { quiet, serve } from './express-rate-limit-harness.js';

const { rateLimit, tollgateStore } = ours;
const MINUTE = 60_000;

/** The codes a logger was given as errors, in order. */
function codes(logger: ReturnType<typeof quiet>): string[] {
  return logger.error.mock.calls.map((call) => (call.arguments[0] as { code: string }).code);
}

/**
 * Two limiters of 2 hits, made by `limit`, on GET /a and GET /b: the statuses of /a, /a, /b and the codes logged.
 */
async function twoRoutes(
  limit: (options: Record<string, unknown>) => RequestHandler,
): Promise<{ statuses: number[]; codes: string[] }> {
  const logger = quiet();
  const app = express();
  for (const path of ['/a', '/b'])
    app.get(path, limit({ limit: 2, logger }), (_req, res) => {
      res.send('ok');
    });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const statuses: number[] = [];
    for (const path of ['/a', '/a', '/b']) statuses.push((await fetch(`${url}${path}`)).status);
    return { statuses, codes: codes(logger) };
  } finally {
    server.close();
  }
}

describe('tollgate/express-rate-limit: counters on a Tollgate store', () => {
  it('limiters on one store and prefix share a count; with their own prefixes, or their own stores, they count apart', async () => {
    const shared = new TollgateMemoryStore({ autoCleanup: false });
    const logger = quiet();
    const api = () => tollgateStore(shared, { prefix: 'api' });
    const app = await serve([
      rateLimit({ limit: 3, store: api(), logger, requestPropertyName: 'first' }),
      rateLimit({ limit: 3, store: api(), logger }),
    ] as never);
    try {
      // Each request counted twice on one counter: the second of them is the fourth hit. As with two
      // express-rate-limit stores on one Redis prefix, that double count is reported.
      assert.deepEqual([(await app.get()).status, (await app.get()).status], [200, 429]);
      assert.deepEqual(codes(logger), ['ERR_ERL_DOUBLE_COUNT']);
    } finally {
      await app.close();
    }
    const apart = await serve([
      rateLimit({ limit: 2, store: tollgateStore(shared, { prefix: 'one' }), logger }),
      rateLimit({ limit: 2, store: tollgateStore(shared, { prefix: 'two' }), logger }),
    ] as never);
    try {
      assert.deepEqual(
        [(await apart.get()).status, (await apart.get()).status, (await apart.get()).status],
        [200, 200, 429],
      );
    } finally {
      await apart.close();
    }
  });

  it('two limiters on one counter with another limit or window: one warning at wire-up naming both', () => {
    const shared = new TollgateMemoryStore({ autoCleanup: false });
    const logger = quiet();
    const api = () => tollgateStore(shared, { prefix: 'api' });
    rateLimit({ windowMs: 15 * MINUTE, limit: 100, store: api(), logger });
    rateLimit({ windowMs: MINUTE, limit: 5, store: api(), logger });
    rateLimit({ windowMs: MINUTE, limit: 7, store: api(), logger });
    assert.equal(logger.error.mock.callCount(), 1);
    const warning = logger.error.mock.calls[0]?.arguments[0] as { code: string; message: string };
    assert.equal(warning.code, 'TOLLGATE_SHARED_COUNTER');
    assert.match(warning.message, /100 per 900000 ms.*5 per 60000 ms/);
    assert.match(warning.message, /prefix "api".*tollgateStore\(store, \{ prefix/);
    // The store itself and tollgateStore(store) count under one prefix, 'erl': two objects, one counter.
    const mixed = quiet();
    rateLimit({ limit: 1, store: shared, logger: mixed });
    rateLimit({ limit: 2, store: tollgateStore(shared), logger: mixed });
    assert.deepEqual(codes(mixed), ['TOLLGATE_SHARED_COUNTER']);
    const silent = quiet();
    rateLimit({ limit: 1, store: tollgateStore(shared, { prefix: 'x' }), logger: silent });
    rateLimit({
      limit: 2,
      store: tollgateStore(shared, { prefix: 'x' }),
      logger: silent,
      validate: { unsharedStore: false },
    });
    assert.equal(silent.error.mock.callCount(), 0);
  });

  it("tollgateStore refuses what is no Tollgate store, and a prefix outside a scope's characters", () => {
    assert.throws(() => tollgateStore({} as never), { code: 'ERR_TOLLGATE_CONFIG', option: 'store' });
    assert.throws(() => tollgateStore(new TollgateMemoryStore(), { prefix: 'a b' }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'prefix',
    });
  });

  it('one express-rate-limit store object for two limiters: ERR_ERL_STORE_REUSE, as express-rate-limit logs it', () => {
    for (const library of [erl, ours] as const) {
      const logger = quiet();
      const store = new library.MemoryStore();
      library.rateLimit({ store: store as never, logger });
      library.rateLimit({ store: store as never, logger });
      assert.deepEqual(codes(logger), ['ERR_ERL_STORE_REUSE']);
      store.shutdown();
    }
  });

  it('one Tollgate store given as `store` to two limiters: ERR_ERL_STORE_REUSE, counting on as one reused store does', async () => {
    const erlStore = new erl.MemoryStore();
    const expected = await twoRoutes((options) => erl.rateLimit({ ...options, store: erlStore }));
    erlStore.shutdown();
    assert.deepEqual(expected, { statuses: [200, 200, 429], codes: ['ERR_ERL_STORE_REUSE'] });
    const shared = new TollgateMemoryStore({ autoCleanup: false });
    const actual = await twoRoutes((options) => rateLimit({ ...options, store: shared }));
    assert.deepEqual(actual, expected);
    // Other limits on it are that same finding, not a second one.
    const logger = quiet();
    const another = new TollgateMemoryStore({ autoCleanup: false });
    rateLimit({ limit: 1, store: another, logger });
    rateLimit({ windowMs: MINUTE, limit: 5, store: another, logger });
    assert.deepEqual(codes(logger), ['ERR_ERL_STORE_REUSE']);
    assert.match(String(logger.error.mock.calls[0]?.arguments[0]), /tollgateStore\(store, \{ prefix/);
  });
});

describe('tollgate/express-rate-limit: MemoryStore on its own', () => {
  it('counts before any limiter calls init, in the default window, and forgets a key reset, as the original does', async () => {
    for (const Store of [erl.MemoryStore, ours.MemoryStore]) {
      const store = new Store();
      assert.equal((await store.increment('k')).totalHits, 1, Store.name);
      assert.equal((await store.increment('k')).totalHits, 2, Store.name);
      assert.notEqual(await store.get('k'), undefined);
      await store.resetKey('k');
      assert.equal(await store.get('k'), undefined);
      store.shutdown();
    }
  });
});
