// The adapter contract on Hono 4 served by @hono/node-server, and the identifier outside Node's server.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { describe, it } from 'node:test';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { stream } from 'hono/streaming';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { rateLimit } from '../../src/adapters/hono.js';
import { createLimiter } from '../../src/limiter.js';
import { concurrency } from '../../src/policies/concurrency.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import {
  listen,
  type RoutePlan,
  runAdapterContract,
  STREAMED,
  silentLogger,
} from '../contract/adapter-contract.js';

/** Acts out the contract's route plan; what it throws, the app's onError answers 500. */
async function serve(plan: RoutePlan, c: Context): Promise<Response> {
  const status = (plan.status ?? 200) as ContentfulStatusCode;
  if (plan.verdict !== undefined) c.header('x-verdict', plan.verdict);
  if (plan.stream) {
    c.status(status);
    c.header('content-type', 'text/plain');
    return stream(c, async (body) => {
      await body.write(STREAMED[0]);
      await plan.hold;
      await body.write(STREAMED[1]);
    });
  }
  await plan.hold;
  if (plan.throws) throw new Error('route failed');
  return c.json({ ok: true }, status);
}

runAdapterContract('Hono', async ({ handler, beforeLimit, route, requestWasSuccessful, ...options }) => {
  const app = new Hono<{ Bindings: HttpBindings }>();
  // Hono's default error handler would print every error it answers with 500.
  app.onError((_error, c) => c.json({ error: 'route failed' }, 500));
  if (beforeLimit !== undefined)
    app.use(async (c, next) => {
      await beforeLimit(c.env.incoming);
      await next();
    });
  app.use(
    rateLimit({
      ...options,
      ...(handler === undefined
        ? {}
        : {
            handler: (_c, decision) => {
              const answer = handler(decision);
              return Response.json(answer.body, { status: answer.status });
            },
          }),
      ...(requestWasSuccessful === undefined
        ? {}
        : {
            requestWasSuccessful: (_c, res) =>
              requestWasSuccessful(res.headers.get('x-verdict') ?? undefined),
          }),
    }),
  );
  app.get('/', (c) => serve(route?.() ?? {}, c));
  return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
});

describe('Hono without @hono/node-server (app.request, as in a Worker or a test)', () => {
  const limiter = () =>
    createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 0 }),
      store: new MemoryStore({ autoCleanup: false }),
    });

  it('limits by the given identifier', async () => {
    const app = new Hono();
    app.use(rateLimit({ limiter: limiter(), identifier: (c) => c.req.header('x-api-key') }));
    app.get('/', (c) => c.text('ok'));
    const get = (key: string) => app.request('/', { headers: { 'x-api-key': key } });
    assert.equal((await get('a')).status, 200);
    assert.equal((await get('a')).status, 429);
    assert.equal((await get('b')).status, 200);
  });

  it('answers 500 and logs a configuration error naming `identifier` when there is no connection info', async () => {
    const logger = silentLogger();
    const app = new Hono();
    app.use(rateLimit({ limiter: limiter(), logger }));
    app.get('/', (c) => c.text('ok'));
    const response = await app.request('/');
    assert.equal(response.status, 500);
    const [error] = logger.error.mock.calls[0]?.arguments ?? [];
    assert.equal((error as { code?: unknown }).code, 'ERR_TOLLGATE_CONFIG');
    assert.equal((error as { option?: unknown }).option, 'identifier');
  });

  it('ends what a request holds once the app has returned its Response: a slot, a refund, a non-Error thrown', async () => {
    const store = new MemoryStore({ clock: () => Date.UTC(2030, 0, 1), autoCleanup: false });
    const policy = [tokenBucket({ capacity: 3, refillPerSecond: 1 }), concurrency({ max: 1, leaseMs: '1m' })];
    const limiter = createLimiter({ policy, store });
    const app = new Hono();
    app.use(rateLimit({ limiter, identifier: () => 'client', skipFailedRequests: true }));
    let letGo = () => {};
    const held = new Promise<void>((resolve) => (letGo = resolve));
    app.get('/held', async (c) => {
      await held;
      return c.text('done');
    });
    app.get('/failed', (c) => c.text('no', 500));
    app.get('/thrown', () => {
      throw 'not an Error';
    });
    const first = app.request('/held');
    assert.equal((await app.request('/held')).status, 429);
    letGo();
    assert.equal((await first).status, 200);
    assert.equal((await app.request('/failed')).status, 500);
    await assert.rejects(
      async () => app.request('/thrown'),
      (thrown: unknown) => thrown === 'not an Error',
    );
    await new Promise((resolve) => setImmediate(resolve));
    // One unit spent by the 200; the 429 spent nothing; the 500 and the throw were given back; no slot held.
    const left = await limiter.peek('client', { cost: 0 });
    assert.deepEqual(
      left.policies.map((p) => p.remaining),
      [2, 1],
    );
  });

  it('puts the headers on a bare Response returned by the route', async () => {
    const app = new Hono();
    app.use(rateLimit({ limiter: limiter(), identifier: () => 'client' }));
    app.get('/', () => new Response('plain'));
    const response = await app.request('/');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('RateLimit-Remaining'), '0');
  });
});
