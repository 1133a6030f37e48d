// express-rate-limit's style where the differential test cannot reach: store failures and fallbacks, a full hit
// counter, failures handed to Express, the instance methods, observers and the trust-proxy warning.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request, Response } from 'express';
import { ipKeyGenerator, rateLimit } from '../../../src/adapters/express/express.js';
import type { Decision } from '../../../src/decision/decision.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import type { Store } from '../../../src/stores/store.js';
import { quiet, serve, store, unreachable } from './express-rate-limit-harness.js';

describe("express-rate-limit's style: beyond the differential test", () => {
  it('passOnStoreError: false (the default) hands Express an error, true lets the request through uncounted', async () => {
    const closed = await serve(rateLimit({ windowMs: 1000, limit: 1, store: unreachable() }));
    try {
      const answer = await closed.get();
      assert.deepEqual([answer.status, answer.body], [500, { error: 'ERR_TOLLGATE_STORE' }]);
    } finally {
      await closed.close();
    }
    const open = await serve(
      rateLimit({ windowMs: 1000, limit: 1, store: unreachable(), passOnStoreError: true }),
    );
    try {
      for (let i = 0; i < 2; i++) {
        const answer = await open.get();
        assert.deepEqual([answer.status, answer.body], [200, { figures: null }]);
        assert.equal(answer.headers.get('x-ratelimit-limit'), null);
      }
    } finally {
      await open.close();
    }
  });

  it('a throwing keyGenerator, skip, limit or handler reaches the app error handler once, as with express-rate-limit', async () => {
    const boom = () => {
      throw Object.assign(new Error('boom'), { code: 'BOOM' });
    };
    for (const options of [
      { keyGenerator: boom },
      { skip: boom },
      { limit: boom },
      { limit: 0, handler: boom },
    ]) {
      const logger = quiet();
      const app = await serve(rateLimit({ windowMs: 1000, logger, ...options } as never));
      try {
        assert.deepEqual(await app.get().then(({ status, body }) => [status, body]), [
          500,
          { error: 'BOOM' },
        ]);
        // The app's error handler reports it: Tollgate logging it as well would tell of one failure twice.
        assert.equal(app.errors.length, 1);
        assert.equal(logger.error.mock.callCount(), 0, Object.keys(options).join());
      } finally {
        await app.close();
      }
    }
  });

  it('a full hit counter denies whatever the limit, and a limit function above what it holds is an error', async () => {
    // A window of 2^49 ms holds 3 hits (their product stays below 2^51): the 4th is denied at a limit of 3.
    const denying = (req: Request, res: Response) => {
      const { limit, used, remaining } = req.rateLimit ?? {};
      res.status(429).json({ limit, used, remaining });
    };
    for (const limit of [3, () => 3]) {
      const app = await serve(
        rateLimit({
          windowMs: 2 ** 49,
          limit,
          store: store(),
          keyGenerator: () => 'alice',
          handler: denying,
        }),
      );
      try {
        const answers = [];
        for (let i = 0; i < 5; i++) answers.push(await app.get());
        assert.deepEqual(
          answers.map(({ status }) => status),
          [200, 200, 200, 429, 429],
        );
        // The counter holds 3, so the 4th hit is the least it can tell.
        assert.deepEqual(answers[3]?.body, { limit: 3, used: 4, remaining: 0 });
      } finally {
        await app.close();
      }
    }
    const above = await serve(rateLimit({ windowMs: 2 ** 49, limit: () => 4, store: store() }));
    try {
      assert.deepEqual(await above.get().then(({ status, body }) => [status, body]), [
        500,
        { error: 'ERR_TOLLGATE_ARGUMENT' },
      ]);
      assert.match(String((above.errors[0] as Error).message), /at most 3 with this `windowMs` \(gave 4\)/);
    } finally {
      await above.close();
    }
  });

  it("a decision the store's memory fallback made reaches onDecision (metrics) marked degraded", async () => {
    const inner = store();
    const fallback: Store = {
      evaluate: async (request) => ({ ...(await inner.evaluate(request)), degraded: 'fallback' }),
      reset: (keys) => inner.reset(keys),
    };
    const heard: Decision[] = [];
    const app = await serve(
      rateLimit({
        limit: 1,
        store: fallback,
        onDecision: ({ decision }) => {
          heard.push(decision);
        },
      }),
    );
    try {
      const allowed = await app.get();
      assert.equal(allowed.status, 200);
      assert.equal((await app.get()).status, 429);
      assert.deepEqual(
        heard.map(({ allowed, degraded }) => [allowed, degraded]),
        [
          [true, 'fallback'],
          [false, 'fallback'],
        ],
      );
    } finally {
      await app.close();
    }
  });

  it('resetKey forgets a client; getKey reads its hits and its window end without counting', async () => {
    const clock = { now: 1_000_000 };
    const limiter = rateLimit({
      windowMs: 60_000,
      limit: 1,
      store: new MemoryStore({ clock: () => clock.now, autoCleanup: false }),
      keyGenerator: () => 'alice',
    });
    const app = await serve(limiter);
    try {
      assert.equal(await limiter.getKey('alice'), undefined);
      assert.equal((await app.get()).status, 200);
      assert.equal((await app.get()).status, 429);
      assert.deepEqual(await limiter.getKey('alice'), { totalHits: 2, resetTime: new Date(1_060_000) });
      assert.deepEqual(await limiter.getKey('alice'), { totalHits: 2, resetTime: new Date(1_060_000) });
      await limiter.resetKey('alice');
      assert.equal(await limiter.getKey('alice'), undefined);
      assert.equal((await app.get()).status, 200);
    } finally {
      await app.close();
    }
  });

  it("onDecision (tollgate/metrics, tollgate/otel) hears each decision as express-rate-limit's style made it", async () => {
    const events: { allowed: boolean; limit: number; remaining: number; scope: string; shadow: boolean }[] =
      [];
    const logger = quiet();
    let throwOnce = true;
    const app = await serve(
      rateLimit({
        limit: 1,
        scope: 'login',
        store: store(),
        keyGenerator: () => 'alice',
        logger,
        onDecision: ({ decision, scope, shadow }) => {
          events.push({
            allowed: decision.allowed,
            limit: decision.limit,
            remaining: decision.remaining,
            scope,
            shadow,
          });
          if (throwOnce) {
            throwOnce = false;
            throw new Error('observer failed');
          }
        },
      }),
    );
    try {
      assert.deepEqual([(await app.get()).status, (await app.get()).status], [200, 429]);
      assert.deepEqual(events, [
        { allowed: true, limit: 1, remaining: 0, scope: 'login', shadow: false },
        { allowed: false, limit: 1, remaining: 0, scope: 'login', shadow: false },
      ]);
      assert.equal(logger.error.mock.callCount(), 1);
    } finally {
      await app.close();
    }
  });

  it('warns once of X-Forwarded-For without trust proxy, unless validate turns that check off', async () => {
    for (const [validate, warnings] of [
      [undefined, 1],
      [false, 0],
      [{ xForwardedForHeader: false }, 0],
      [{ default: false }, 0],
      [{ default: false, xForwardedForHeader: true }, 1],
      [{ trustProxy: false }, 1],
    ] as const) {
      const logger = quiet();
      const app = await serve(
        rateLimit({ limit: 9, logger, ...(validate === undefined ? {} : { validate }) }),
      );
      try {
        for (let i = 0; i < 2; i++) await app.get({ 'x-forwarded-for': '203.0.113.1' });
      } finally {
        await app.close();
      }
      assert.equal(logger.warn.mock.callCount(), warnings, JSON.stringify(validate));
    }
  });

  it("is typed by the style its keys choose: erl's callbacks get (req, res), its handler the options", async () => {
    const limiter = rateLimit({
      windowMs: 60_000,
      limit: 1,
      store: store(),
      keyGenerator: (req, res) => `${req.ip}:${res.statusCode}`,
      handler: (_req, res, _next, options) => res.status(options.statusCode).send({ said: options.message }),
    });
    const app = await serve(limiter);
    try {
      assert.equal((await app.get()).status, 200);
      const denied = await app.get();
      assert.deepEqual(
        [denied.status, denied.body],
        [429, { said: 'Too many requests, please try again later.' }],
      );
    } finally {
      await app.close();
    }
  });

  it("ipKeyGenerator: express-rate-limit's helper, IPv4 as is and IPv6 by its network", () => {
    assert.equal(ipKeyGenerator('203.0.113.7'), '203.0.113.7');
    assert.equal(ipKeyGenerator('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(ipKeyGenerator('2001:db8:1:2:3:4:5:6'), '2001:db8:1::/56');
    assert.equal(ipKeyGenerator('2001:db8:1:2:3:4:5:6', 64), '2001:db8:1:2::/64');
    assert.equal(ipKeyGenerator('2001:db8:1:2:3:4:5:6', false), '2001:db8:1:2:3:4:5:6');
    assert.throws(() => ipKeyGenerator('::1', 0), { option: 'ipv6Subnet' });
  });
});
