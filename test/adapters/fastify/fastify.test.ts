// The adapter contract on Fastify 5, as the plugin and as a route's own hook, plus per-route config.rateLimit.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type FastifyRateLimitHookOptions, rateLimit } from '../../../src/adapters/fastify/fastify.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import { tokenBucket } from '../../../src/policies/token-bucket.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import {
  CLIENT,
  type ContractApp,
  type MakeApp,
  type RoutePlan,
  runAdapterContract,
  shapedByApp,
  streamedChunks,
  unitsLeft,
} from '../../../src/testing/adapter-contract.js';

function header(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

async function listenFastify(app: FastifyInstance): Promise<ContractApp> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** Acts out the contract's route plan; what it throws, Fastify answers 500. */
async function serve(plan: RoutePlan, reply: FastifyReply): Promise<unknown> {
  reply.code(plan.status ?? 200);
  if (plan.verdict !== undefined) reply.header('x-verdict', plan.verdict);
  if (plan.stream) return reply.type('text/plain').send(Readable.from(streamedChunks(plan)));
  await plan.hold;
  if (plan.throws) throw new Error('route failed');
  return { ok: true };
}

/** The contract's app-wide error handler: its own body for an error with an HTTP status, 500 for any other. */
function shapeByApp(error: { statusCode?: number }, _request: FastifyRequest, reply: FastifyReply): unknown {
  const status = error.statusCode;
  if (status === undefined || status < 400 || status > 599)
    return reply.code(500).send({ error: 'route failed' });
  const { body } = shapedByApp(status);
  return reply.code(status).send(body);
}

/**
 * The contract's app with the limit where `placement` says: the plugin's app-wide onRequest hook, or the route's
 * own `fastify.rateLimit()` hook, as a preHandler, on the plugin registered with `global: false`.
 */
function fastifyApp(placement: 'plugin' | 'hook'): MakeApp {
  return async ({ handler, beforeLimit, route, requestWasSuccessful, thrown, ...options }) => {
    const app = Fastify();
    // Added before the plugin's hook, so it runs first.
    if (beforeLimit !== undefined) app.addHook('onRequest', (request) => beforeLimit(request.raw));
    if (thrown) app.setErrorHandler(shapeByApp);
    const limit: FastifyRateLimitHookOptions = {
      ...options,
      ...(thrown ? { throw: true } : {}),
      ...(handler === undefined
        ? {}
        : {
            handler: (request, reply, decision) => {
              const answer = handler(decision, request.rateLimit);
              reply.code(answer.status);
              return answer.body;
            },
          }),
      ...(requestWasSuccessful === undefined
        ? {}
        : {
            requestWasSuccessful: (_request, reply) =>
              requestWasSuccessful(header(reply.getHeader('x-verdict'))),
          }),
    };
    const serving = (request: FastifyRequest, reply: FastifyReply) =>
      serve(route?.(request.rateLimit) ?? {}, reply);
    if (placement === 'plugin') {
      await app.register(rateLimit, limit);
      app.get('/', serving);
    } else {
      await app.register(rateLimit, { global: false });
      app.get('/', { preHandler: app.rateLimit(limit) }, serving);
    }
    return listenFastify(app);
  };
}

runAdapterContract('Fastify', fastifyApp('plugin'), { thrown: true });
runAdapterContract("Fastify, a route's own fastify.rateLimit() hook", fastifyApp('hook'), { thrown: true });

describe('Fastify per-route config.rateLimit', () => {
  const bucket = (capacity: number) =>
    createLimiter({
      policy: tokenBucket({ capacity, refillPerSecond: 0 }),
      store: new MemoryStore({ autoCleanup: false }),
    });

  async function statuses(app: FastifyInstance, url: string, count: number): Promise<number[]> {
    const result = [];
    for (let i = 0; i < count; i++)
      result.push((await app.inject({ url, remoteAddress: CLIENT })).statusCode);
    return result;
  }

  it('false leaves a route unlimited; a route without limiter options shares the plugin limiter', async () => {
    const limiter = bucket(3);
    const app = Fastify();
    // Declared before the plugin loads: the app-wide hook still covers it.
    app.get('/early', async () => 'early');
    await app.register(rateLimit, { limiter });
    app.get('/open', { config: { rateLimit: false } }, async () => 'open');
    app.get('/double', { config: { rateLimit: { cost: 2 } } }, async () => 'double');
    try {
      assert.deepEqual(await statuses(app, '/open', 5), [200, 200, 200, 200, 200]);
      assert.deepEqual(await statuses(app, '/double', 1), [200]);
      assert.deepEqual(await statuses(app, '/early', 2), [200, 429]);
      assert.equal((await app.inject('/nowhere')).statusCode, 429);
    } finally {
      await app.close();
    }
  });

  it('a route with its own limit counts in its own buckets, on the plugin store', async () => {
    const store = new MemoryStore({ autoCleanup: false });
    const app = Fastify();
    await app.register(rateLimit, { requestsPerMinute: 10, store, scope: 'app' });
    app.get('/', async () => 'app');
    app.get('/strict', { config: { rateLimit: { requestsPerMinute: 1, scope: 'strict' } } }, async () => 's');
    // Twins of both limiters on the same store read the buckets each route spent from.
    const twin = (requestsPerMinute: number, scope: string) =>
      createLimiter({ policy: tokenBucket({ requestsPerMinute }), store, scope });
    try {
      assert.deepEqual(await statuses(app, '/strict', 2), [200, 429]);
      assert.equal(await unitsLeft(twin(1, 'strict')), 0);
      assert.equal(await unitsLeft(twin(10, 'app')), 10);
      assert.deepEqual(await statuses(app, '/', 1), [200]);
      assert.equal(await unitsLeft(twin(10, 'app')), 9);
    } finally {
      await app.close();
    }
  });

  it("a route sharing the plugin's limiter inherits its refund options, and its lockout through that limiter", async () => {
    // A fixed clock: the bucket refills, so a denial has a retry time, but not while the test runs.
    const store = new MemoryStore({ clock: () => Date.UTC(2030, 0, 1), autoCleanup: false });
    const app = Fastify();
    const policy = tokenBucket({ capacity: 2, refillPerSecond: 1 });
    await app.register(rateLimit, {
      policy,
      store,
      scope: 'login',
      blockMs: '15m',
      skipSuccessfulRequests: true,
    });
    app.get<{ Querystring: { password?: string } }>(
      '/login',
      { config: { rateLimit: { cost: 1 } } },
      async (request, reply) => reply.code(request.query.password === 'right' ? 200 : 401).send(),
    );
    const login = async (password: string) => {
      const url = `/login?password=${password}`;
      const reply = await app.inject({ url, remoteAddress: CLIENT });
      // The refund follows the response: let it land before the next login.
      await new Promise((resolve) => setImmediate(resolve));
      return [reply.statusCode, reply.headers['retry-after']];
    };
    try {
      for (let i = 0; i < 3; i++) assert.deepEqual(await login('right'), [200, undefined]);
      assert.deepEqual(await login('wrong'), [401, undefined]);
      assert.deepEqual(await login('wrong'), [401, undefined]);
      assert.deepEqual(await login('right'), [429, '900']);
    } finally {
      await app.close();
    }
  });

  it('rejects a bad route config when the route is declared', async (t) => {
    const app = Fastify();
    t.after(() => app.close());
    await app.register(rateLimit, { limiter: bucket(1) });
    assert.throws(
      () => app.get('/bad', { config: { rateLimit: { statusCode: 200 } } }, async () => 'bad'),
      (error: { code?: unknown; option?: unknown }) =>
        error.code === 'ERR_TOLLGATE_CONFIG' && error.option === 'statusCode',
    );
  });
});
