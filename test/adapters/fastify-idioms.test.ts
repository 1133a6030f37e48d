// Fastify's idioms in tollgate/fastify: request.rateLimit, the hook option, global: false, the rateLimit decorator,
// rejections thrown to the error handler, onExceeding/onExceeded, and request.log as the default logger.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { RateLimitError, rateLimit } from '../../src/adapters/fastify.js';
import { createLimiter } from '../../src/limiter.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import type { RateLimitInfo } from '../../src/rate-limit-info.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { CLIENT, silentLogger, unitsLeft } from '../contract/adapter-contract.js';

const T0 = Date.UTC(2030, 0, 1);
const CAPACITY = 2;
const REJECTION = { error: 'Too Many Requests', message: 'Too many requests, please try again later.' };

/** Two units, one back per second, on a clock fixed at T0: every figure is exact. */
function bucket(store = new MemoryStore({ clock: () => T0, autoCleanup: false })) {
  return createLimiter({ policy: tokenBucket({ capacity: CAPACITY, refillPerSecond: 1 }), store });
}

/** What request.rateLimit says after the n-th request from `key` (admitted while n <= CAPACITY). */
function nth(n: number, key = CLIENT) {
  const used = Math.min(n, CAPACITY);
  const resetTime = new Date(T0 + used * 1000);
  return { limit: CAPACITY, used, remaining: CAPACITY - used, resetTime, key, allowed: n <= CAPACITY };
}

function readable(info: RateLimitInfo | undefined) {
  if (info === undefined) return undefined;
  const { limit, used, remaining, resetTime, key, decision } = info;
  return { limit, used, remaining, resetTime, key, allowed: decision.allowed };
}

/** An app closed when the test ends. */
function app(
  t: { after(fn: () => Promise<void>): void },
  options: { loggerInstance?: FastifyBaseLogger; genReqId?: () => string } = {},
) {
  const fastify = Fastify(options);
  t.after(() => fastify.close());
  return fastify;
}

async function statuses(fastify: FastifyInstance, url: string, count: number, headers = {}) {
  const result = [];
  for (let i = 0; i < count; i++) result.push((await fastify.inject({ url, headers })).statusCode);
  return result;
}

function isConfigError(option: string) {
  return (error: { code?: unknown; option?: unknown }) =>
    error.code === 'ERR_TOLLGATE_CONFIG' && error.option === option;
}

describe('Fastify request.rateLimit', () => {
  it("is on every counted request, admitted or rejected, exact on a fixed clock; a skipped one's is undefined", async (t) => {
    const fastify = app(t);
    const seen: unknown[] = [];
    fastify.addHook('onResponse', async (request) => void seen.push(readable(request.rateLimit)));
    await fastify.register(rateLimit, {
      limiter: bucket(),
      skip: (request) => request.url === '/skipped',
    });
    fastify.get('/', async (request) => ({ remaining: request.rateLimit?.remaining }));
    fastify.get('/skipped', async () => 'skipped');
    fastify.get('/open', { config: { rateLimit: false } }, async () => 'open');
    assert.deepEqual((await fastify.inject('/')).json(), { remaining: 1 });
    assert.deepEqual(await statuses(fastify, '/', 2), [200, 429]);
    assert.deepEqual(await statuses(fastify, '/skipped', 1), [200]);
    assert.deepEqual(await statuses(fastify, '/open', 1), [200]);
    assert.deepEqual(seen, [nth(1), nth(2), nth(3), undefined, undefined]);
  });

  it('is there for a handler, beside the decision it came from', async (t) => {
    const fastify = app(t);
    await fastify.register(rateLimit, {
      limiter: bucket(),
      handler: (request, _reply, decision) => ({
        same: request.rateLimit?.decision === decision,
        figures: readable(request.rateLimit),
      }),
    });
    fastify.get('/', async () => 'ok');
    await statuses(fastify, '/', CAPACITY);
    const rejected = await fastify.inject('/');
    assert.equal(rejected.statusCode, 429);
    assert.deepEqual(rejected.json(), {
      same: true,
      figures: { ...nth(3), resetTime: nth(3).resetTime.toISOString() },
    });
  });
});

describe("Fastify hook: 'preHandler'", () => {
  /** Who the request says it is, as an authentication hook would set it. */
  const authenticate = async (request: FastifyRequest & { user?: string }) => {
    request.user = String(request.headers['x-user']);
  };
  const user = (request: FastifyRequest) => (request as { user?: string }).user;

  it("keys requests by a user that the route's own preHandler sets, and one the app adds later", async (t) => {
    const fastify = app(t);
    fastify.decorateRequest('user', undefined);
    await fastify.register(rateLimit, { limiter: bucket(), hook: 'preHandler', identifier: user });
    fastify.get('/own', { preHandler: authenticate }, async (request) => request.rateLimit?.key);
    fastify.register(async (scope) => {
      // Added after the plugin: app-level preHandler hooks still run before a route's own.
      scope.addHook('preHandler', authenticate);
      scope.get('/scoped', async (request) => request.rateLimit?.key);
    });
    const alice = { 'x-user': 'alice' };
    assert.equal((await fastify.inject({ url: '/own', headers: alice })).body, 'alice');
    assert.deepEqual(await statuses(fastify, '/scoped', 2, alice), [200, 429]);
    assert.deepEqual(await statuses(fastify, '/own', 2, { 'x-user': 'bob' }), [200, 200]);
    assert.deepEqual(await statuses(fastify, '/scoped', 1, { 'x-user': 'bob' }), [429]);
    // A 404 has no route to carry the hook, nor a user here (it counts as unknown); it is limited all the same.
    assert.deepEqual(await statuses(fastify, '/nowhere', 3, { 'x-user': 'carol' }), [404, 404, 429]);
  });

  it('set on one route keys that route by user while the rest of the app counts addresses at onRequest', async (t) => {
    const fastify = app(t);
    const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
    const seen: (string | undefined)[] = [];
    await fastify.register(rateLimit, {
      limiter: bucket(store),
      identifier: (request) => {
        seen.push(user(request));
        return user(request) ?? request.ip;
      },
    });
    fastify.get('/', { onRequest: authenticate }, async () => 'ip');
    const byUser = { hook: 'preHandler', requestsPerMinute: 1, scope: 'user' } as const;
    fastify.get('/user', { preHandler: authenticate, config: { rateLimit: byUser } }, async () => 'user');
    assert.deepEqual(await statuses(fastify, '/user', 2, { 'x-user': 'dave' }), [200, 429]);
    assert.deepEqual(await statuses(fastify, '/', 1, { 'x-user': 'dave' }), [200]);
    // The app-wide limit ran at onRequest, before the route's own onRequest authenticated anyone.
    assert.deepEqual(seen, ['dave', 'dave', undefined]);
    assert.equal(await unitsLeft(bucket(store)), CAPACITY - 1);
  });

  it('is checked at wire-up, naming the option', async (t) => {
    await assert.rejects(
      async () => app(t).register(rateLimit, { hook: 'onSend' as 'onRequest' }),
      isConfigError('hook'),
    );
    const fastify = app(t);
    await fastify.register(rateLimit, {});
    assert.throws(
      () =>
        fastify.get('/', { config: { rateLimit: { hook: 'preSerialization' as 'onRequest' } } }, () => ''),
      isConfigError('hook'),
    );
  });
});

describe('Fastify global: false', () => {
  it('limits only the routes whose config.rateLimit asks, on the plugin limiter, and leaves 404s alone', async (t) => {
    const fastify = app(t);
    const limiter = bucket();
    await fastify.register(rateLimit, { limiter, global: false });
    fastify.get('/free', async (request) => ({ figures: request.rateLimit ?? 'none' }));
    fastify.get('/limited', { config: { rateLimit: {} } }, async () => 'limited');
    const free = await fastify.inject('/free');
    assert.deepEqual(
      [free.statusCode, free.json(), free.headers.ratelimit],
      [200, { figures: 'none' }, undefined],
    );
    assert.deepEqual(await statuses(fastify, '/free', 3), [200, 200, 200]);
    assert.deepEqual(await statuses(fastify, '/nowhere', 3), [404, 404, 404]);
    assert.deepEqual(await statuses(fastify, '/limited', 3), [200, 200, 429]);
    assert.equal(await unitsLeft(limiter), 0);
  });

  it('must be a boolean, and belongs to the plugin only', async (t) => {
    await assert.rejects(
      async () => app(t).register(rateLimit, { global: 'no' as unknown as boolean }),
      isConfigError('global'),
    );
    const fastify = app(t);
    await fastify.register(rateLimit, {});
    const config = { rateLimit: { global: false } as object };
    assert.throws(() => fastify.get('/', { config }, () => ''), isConfigError('global'));
  });
});

describe('Fastify fastify.rateLimit() decorator', () => {
  it("limits a route as its own preHandler, spending the plugin's buckets once, not also app-wide", async (t) => {
    const fastify = app(t);
    const limiter = bucket();
    await fastify.register(rateLimit, { limiter });
    fastify.get<{ Querystring: { q?: string } }>(
      '/heavy',
      { preHandler: fastify.rateLimit({ cost: 2 }) },
      async (request) => ({ q: request.query.q, remaining: request.rateLimit?.remaining }),
    );
    const heavy = await fastify.inject('/heavy?q=x');
    assert.deepEqual(heavy.json(), { q: 'x', remaining: 0 });
    assert.equal(heavy.headers['ratelimit-remaining'], '0');
    assert.deepEqual(await statuses(fastify, '/heavy', 1), [429]);
    assert.equal(await unitsLeft(limiter), 0);
  });

  it('with limiter options gets buckets of its own on the plugin store; with global: false only it limits', async (t) => {
    const fastify = app(t);
    const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
    await fastify.register(rateLimit, { limiter: bucket(store), global: false });
    const strict = { requestsPerMinute: 1, scope: 'strict' };
    fastify.get('/strict', { onRequest: fastify.rateLimit(strict) }, async () => 'strict');
    fastify.get('/plain', { preHandler: [fastify.rateLimit()] }, async () => 'plain');
    assert.deepEqual(await statuses(fastify, '/strict', 2), [200, 429]);
    assert.equal(
      await unitsLeft(
        createLimiter({ policy: tokenBucket({ requestsPerMinute: 1 }), store, scope: 'strict' }),
      ),
      0,
    );
    assert.equal(await unitsLeft(bucket(store)), CAPACITY);
    assert.deepEqual(await statuses(fastify, '/plain', 3), [200, 200, 429]);
  });

  it('refuses the options that place a limit, naming them', async (t) => {
    const fastify = app(t);
    await fastify.register(rateLimit, {});
    for (const option of ['hook', 'global'])
      assert.throws(() => fastify.rateLimit({ [option]: 'preHandler' }), isConfigError(option));
    assert.throws(() => fastify.rateLimit({ cost: -1 }), isConfigError('cost'));
  });
});

describe('Fastify throw: true', () => {
  it('hands a RateLimitError to setErrorHandler, which shapes the answer; the rate-limit headers stay', async (t) => {
    const fastify = app(t);
    const errors: unknown[] = [];
    fastify.setErrorHandler((error, request, reply) => {
      errors.push(error);
      const retryAt = request.rateLimit?.resetTime?.toISOString();
      return reply.code(reply.statusCode === 200 ? 429 : 500).send({ code: 'RATE_LIMITED', retryAt });
    });
    await fastify.register(rateLimit, { limiter: bucket(), throw: true });
    fastify.get('/', async () => 'ok');
    await statuses(fastify, '/', CAPACITY);
    const denied = await fastify.inject('/');
    assert.equal(denied.statusCode, 429);
    assert.deepEqual(denied.json(), { code: 'RATE_LIMITED', retryAt: new Date(T0 + 2000).toISOString() });
    assert.deepEqual(
      [
        denied.headers['retry-after'],
        denied.headers['ratelimit-remaining'],
        denied.headers['ratelimit-limit'],
      ],
      ['1', '0', '2'],
    );
    const [error] = errors;
    assert.ok(error instanceof RateLimitError);
    assert.deepEqual([error.statusCode, error.message, error.body], [429, REJECTION.message, REJECTION]);
    assert.equal(error.rateLimit.decision, error.decision);
    assert.deepEqual(readable(error.rateLimit), nth(3));
  });

  it("under Fastify's default error handler answers Fastify's error body, with the headers", async (t) => {
    const fastify = app(t);
    await fastify.register(rateLimit, {
      limiter: bucket(),
      throw: true,
      statusCode: 503,
      message: { busy: true },
    });
    fastify.get('/', async () => 'ok');
    await statuses(fastify, '/', CAPACITY);
    const denied = await fastify.inject('/');
    assert.deepEqual([denied.statusCode, denied.headers['retry-after']], [503, '1']);
    // A message object has no text: the status's stands in.
    assert.deepEqual(denied.json(), {
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'Service Unavailable',
    });
  });

  it('leaves the 500 of a limiter that failed to the plugin, and is checked at wire-up', async (t) => {
    const fastify = app(t);
    const errorHandler = mock.fn();
    fastify.setErrorHandler(errorHandler);
    const store = { evaluate: () => Promise.reject(new Error('down')), reset: () => {} };
    await fastify.register(rateLimit, { store, throw: true, logger: silentLogger() });
    fastify.get('/', async () => 'ok');
    assert.equal((await fastify.inject('/')).statusCode, 500);
    assert.equal(errorHandler.mock.callCount(), 0);
    await assert.rejects(
      async () => app(t).register(rateLimit, { throw: 1 as unknown as boolean }),
      isConfigError('throw'),
    );
    await assert.rejects(
      async () => app(t).register(rateLimit, { throw: true, handler: () => '' }),
      isConfigError('throw'),
    );
  });
});

describe('Fastify onExceeding and onExceeded', () => {
  it('are called once per counted request within the limit and over it, with the identity', async (t) => {
    const fastify = app(t);
    const onExceeding = mock.fn((_request: FastifyRequest, _key: string) => {});
    const onExceeded = mock.fn((_request: FastifyRequest, _key: string) => {});
    await fastify.register(rateLimit, {
      limiter: bucket(),
      onExceeding,
      onExceeded,
      skip: (request) => request.url === '/skipped',
    });
    fastify.get('/', async () => 'ok');
    fastify.get('/skipped', async () => 'ok');
    assert.deepEqual(await statuses(fastify, '/', 5), [200, 200, 429, 429, 429]);
    await statuses(fastify, '/skipped', 2);
    assert.deepEqual(
      onExceeding.mock.calls.map((call) => [call.arguments[0].url, call.arguments[1]]),
      [
        ['/', CLIENT],
        ['/', CLIENT],
      ],
    );
    assert.deepEqual(
      onExceeded.mock.calls.map((call) => call.arguments[1]),
      [CLIENT, CLIENT, CLIENT],
    );
  });

  it('in shadow mode, onExceeded reports the over-limit requests it lets through', async (t) => {
    const fastify = app(t);
    const onExceeded = mock.fn();
    await fastify.register(rateLimit, { limiter: bucket(), shadow: true, onExceeded });
    fastify.get('/', async () => 'ok');
    assert.deepEqual(await statuses(fastify, '/', 4), [200, 200, 200, 200]);
    assert.equal(onExceeded.mock.callCount(), 2);
  });

  it('log what they throw or reject with, and the request goes on', async (t) => {
    const fastify = app(t);
    const logger = silentLogger();
    await fastify.register(rateLimit, {
      limiter: bucket(),
      logger,
      onExceeding: () => {
        throw new Error('within');
      },
      onExceeded: async () => {
        throw new Error('over');
      },
    });
    fastify.get('/', async () => 'ok');
    assert.deepEqual(await statuses(fastify, '/', 3), [200, 200, 429]);
    await new Promise((resolve) => setImmediate(resolve));
    const logged = logger.error.mock.calls.map((call) => [
      (call.arguments[0] as Error).message,
      call.arguments[1],
    ]);
    assert.deepEqual(logged, [
      ['within', '[tollgate] onExceeding threw; the request goes on'],
      ['within', '[tollgate] onExceeding threw; the request goes on'],
      ['over', '[tollgate] onExceeded threw; the request goes on'],
    ]);
    assert.throws(
      () => fastify.rateLimit({ onExceeded: 'no' as unknown as () => void }),
      isConfigError('onExceeded'),
    );
  });
});

describe('Fastify request.log', () => {
  /** A pino-like logger that records each call with the bindings of the child it was made on. */
  function capture() {
    const lines: { level: string; bindings: Record<string, unknown>; args: unknown[] }[] = [];
    const make = (bindings: Record<string, unknown>): FastifyBaseLogger => {
      const at =
        (level: string) =>
        (...args: unknown[]) =>
          void lines.push({ level, bindings, args });
      const logger = {
        level: 'info',
        info: at('info'),
        error: at('error'),
        warn: at('warn'),
        debug: at('debug'),
        fatal: at('fatal'),
        trace: at('trace'),
        silent: () => {},
        child: (more: Record<string, unknown>) => make({ ...bindings, ...more }),
      };
      return logger as unknown as FastifyBaseLogger;
    };
    return {
      loggerInstance: make({}),
      tollgate: () => lines.filter(({ args }) => String(args[1]).startsWith('[tollgate]')),
    };
  }
  const down = { evaluate: () => Promise.reject(new Error('down')), reset: () => {} };

  it("is where the plugin logs a request's failure by default, the request's id bound", async (t) => {
    const { loggerInstance, tollgate } = capture();
    const fastify = app(t, { loggerInstance, genReqId: () => 'req-1' });
    await fastify.register(rateLimit, { store: down });
    fastify.get('/', async () => 'ok');
    assert.equal((await fastify.inject('/')).statusCode, 500);
    const lines = tollgate();
    assert.deepEqual(
      lines.map(({ level, bindings, args }) => [level, bindings.reqId, (args[0] as Error).message, args[1]]),
      [['error', 'req-1', 'down', '[tollgate] rate limiter failed; answering 500']],
    );
  });

  it('gives way to the logger option', async (t) => {
    const { loggerInstance, tollgate } = capture();
    const fastify = app(t, { loggerInstance });
    const logger = silentLogger();
    await fastify.register(rateLimit, { store: down, logger });
    fastify.get('/', async () => 'ok');
    assert.equal((await fastify.inject('/')).statusCode, 500);
    assert.equal(logger.error.mock.callCount(), 1);
    assert.deepEqual(tollgate(), []);
  });
});
