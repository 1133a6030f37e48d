// Fastify's idioms for rejections and reports: throw: true through the error handler, onExceeding/onExceeded, and
// request.log as the default logger.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { RateLimitError, rateLimit } from '../../../src/adapters/fastify/fastify.js';
import { CLIENT, silentLogger } from '../../../src/testing/adapter-contract.js';
import {
  app,
  bucket,
  CAPACITY,
  isConfigError,
  nth,
  REJECTION,
  readable,
  statuses,
  T0,
} from './fastify-fixtures.js';

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
