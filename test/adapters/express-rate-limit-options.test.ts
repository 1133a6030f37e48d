// express-rate-limit's style at wire-up (which keys switch to it, what is refused and what to write instead) and
// the parts the differential test cannot reach: store failures, the instance methods, the trust-proxy warning.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it, mock } from 'node:test';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ipKeyGenerator, rateLimit } from '../../src/adapters/express.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { degradedResponse, type Store, type StoreRequest } from '../../src/stores/store.js';

const store = () => new MemoryStore({ autoCleanup: false });
const quiet = () => ({ warn: mock.fn(), error: mock.fn() });

function refuses(options: object, option: string, message: RegExp): void {
  assert.throws(() => rateLimit(options as never), { code: 'ERR_TOLLGATE_CONFIG', option, message });
}

/** An app with `limiter` before GET /, whose error handler answers `{ error: code }` with 500. */
async function serve(limiter: RequestHandler) {
  const errors: unknown[] = [];
  const app = express();
  app.use(limiter);
  app.get('/', (req, res) => {
    res.json({ figures: req.rateLimit ?? null });
  });
  app.use((error: { code?: string }, _req: Request, res: Response, _next: NextFunction) => {
    errors.push(error);
    res.status(500).json({ error: error.code });
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const get = async (headers: Record<string, string> = {}) => {
    const response = await fetch(url, { headers });
    const text = await response.text();
    const body: unknown = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
    return { status: response.status, headers: response.headers, body };
  };
  return { get, errors, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A Tollgate store that cannot reach its data: it answers as its fail mode says. */
function unreachable(): Store {
  return {
    evaluate: (request: StoreRequest) =>
      degradedResponse(request.policies, request.failOpen ?? true, 1000, Date.now()),
    reset: () => undefined,
  };
}

describe("express-rate-limit's style: which keys switch to it", () => {
  it('any key only express-rate-limit has; Tollgate-only and shared keys keep Tollgate meaning', async () => {
    const native = await serve(rateLimit({ requestsPerMinute: 2, legacyHeaders: false, store: store() }));
    try {
      const { headers } = await native.get();
      assert.equal(headers.get('ratelimit-limit'), '2');
      assert.equal(headers.get('x-ratelimit-limit'), null);
    } finally {
      await native.close();
    }
    for (const key of ['windowMs', 'limit', 'max', 'standardHeaders', 'requestPropertyName', 'validate']) {
      const value = {
        windowMs: 1000,
        limit: 1,
        max: 1,
        standardHeaders: false,
        requestPropertyName: 'x',
        validate: true,
      }[key];
      const erl = await serve(rateLimit({ [key]: value, store: store() } as never));
      try {
        // express-rate-limit's defaults: the X-RateLimit set, no standard fields.
        const { headers } = await erl.get();
        assert.ok(headers.get('x-ratelimit-reset')?.match(/^\d+$/), key);
        assert.equal(headers.get('ratelimit-limit'), null, key);
      } finally {
        await erl.close();
      }
    }
  });

  it("refuses Tollgate's own options beside express-rate-limit's, naming both", () => {
    refuses(
      { windowMs: 1000, policy: {} },
      'policy',
      /`policy` is Tollgate's own, and `windowMs` is express-rate-limit's/,
    );
    refuses({ limit: 5, requestsPerMinute: 5 }, 'requestsPerMinute', /`limit` is express-rate-limit's/);
    refuses({ limit: 5, headers: false }, 'headers', /`legacyHeaders`.*`standardHeaders`/);
    refuses({ limit: 5, failOpen: true }, 'failOpen', /`passOnStoreError`/);
    refuses({ limit: 5, onDecision: 'metrics' }, 'onDecision', /must be a function/);
  });

  it('refuses what it cannot honour, with what to use instead', () => {
    const erlStore = { increment: () => undefined, decrement: () => undefined, resetKey: () => undefined };
    refuses(
      { windowMs: 1000, store: erlStore },
      'store',
      /RedisStore\(\{ client \}\) from 'tollgate\/redis'/,
    );
    refuses({ windowMs: 1000, onLimitReached: () => {} }, 'onLimitReached', /`handler`/);
    refuses(
      { draft_polli_ratelimit_headers: true },
      'draft_polli_ratelimit_headers',
      /standardHeaders: 'draft-6'/,
    );
    refuses({ delayAfter: 1, delayMs: 500 }, 'delayAfter', /express-slow-down's/);
    refuses({ keyGenerator: () => 'k', ipv6Subnet: 48 }, 'ipv6Subnet', /ipKeyGenerator\(req\.ip, subnet\)/);
    refuses(
      { limit: 1, skipFailedRequests: true, skipSuccessfulRequests: true },
      'skipSuccessfulRequests',
      /concurrency\(\)/,
    );
  });

  it('names a bad value, and suggests the option a typo meant', () => {
    refuses({ limit: 5, windowMS: 1000 }, 'windowMS', /did you mean `windowMs`\?$/);
    refuses({ windowMs: 1000, keyGenrator: () => 'k' }, 'keyGenrator', /did you mean `keyGenerator`\?$/);
    refuses({ requestsPerMinut: 5 }, 'requestsPerMinut', /did you mean `requestsPerMinute`\?$/);
    refuses(
      { limit: 5, validate: { xForwardedForHeadr: false } },
      'xForwardedForHeadr',
      /did you mean `xForwardedForHeader`\?$/,
    );
    refuses({ limit: 5, validate: { trustProxy: 'no' } }, 'validate.trustProxy', /must be a boolean/);
    refuses({ windowMs: -1 }, 'windowMs', /positive whole number/);
    refuses({ limit: 1.5 }, 'limit', /non-negative integer/);
    refuses({ max: -1 }, 'max', /non-negative integer/);
    refuses({ limit: '5' }, 'limit', /a number or a function/);
    refuses({ limit: 5, standardHeaders: 'draft-10' }, 'standardHeaders', /"draft-8"/);
    refuses({ limit: 5, legacyHeaders: 'yes' }, 'legacyHeaders', /boolean/);
    refuses({ limit: 5, statusCode: 200 }, 'statusCode', /400-599/);
    refuses({ limit: 5, requestPropertyName: '' }, 'requestPropertyName', /non-empty string/);
    refuses({ limit: 5, ipv6Subnet: 129 }, 'ipv6Subnet', /1 to 128, or false/);
    refuses({ limit: 5, retryAfter: -1 }, 'retryAfter', /non-negative integer/);
    refuses({ limit: 5, passOnStoreError: 'yes' }, 'passOnStoreError', /boolean/);
    refuses({ limit: 5, standardHeaders: 'draft-8', identifier: 'my api' }, 'identifier', /A-Z, a-z, 0-9/);
  });

  it('a store shared by two such limiters needs a scope on each, or their counts would mix', () => {
    const shared = store();
    rateLimit({ windowMs: 1000, limit: 1, store: shared });
    refuses({ windowMs: 1000, limit: 2, store: shared }, 'scope', /give each limiter its own `scope`/);
    rateLimit({ windowMs: 1000, limit: 2, store: shared, scope: 'login' });
    // A limiter the store itself refuses (a window past its retention cap) leaves it free for the next.
    const capped = new MemoryStore({ autoCleanup: false, inactiveAfterMs: '1m' });
    assert.throws(() => rateLimit({ windowMs: 120_000, store: capped }), { code: 'ERR_TOLLGATE_CONFIG' });
    rateLimit({ windowMs: 30_000, store: capped });
  });
});

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

  it('a throwing keyGenerator, limit or handler reaches the app error handler, as with express-rate-limit', async () => {
    const boom = () => {
      throw Object.assign(new Error('boom'), { code: 'BOOM' });
    };
    const logger = quiet();
    for (const options of [{ keyGenerator: boom, logger }, { limit: boom }, { limit: 0, handler: boom }]) {
      const app = await serve(rateLimit({ windowMs: 1000, ...options } as never));
      try {
        assert.deepEqual(await app.get().then(({ status, body }) => [status, body]), [
          500,
          { error: 'BOOM' },
        ]);
      } finally {
        await app.close();
      }
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
