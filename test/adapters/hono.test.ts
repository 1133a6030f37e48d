// The adapter contract on Hono 4 served by @hono/node-server, and the identifier outside Node's server.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { describe, it } from 'node:test';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { stream } from 'hono/streaming';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { rateLimit } from '../../src/adapters/hono/hono.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { concurrency } from '../../src/policies/concurrency.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import {
  listen,
  type RoutePlan,
  runAdapterContract,
  STREAMED,
  shapedByApp,
  silentLogger,
} from '../../src/testing/adapter-contract.js';

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

runAdapterContract(
  'Hono',
  async ({ handler, beforeLimit, route, requestWasSuccessful, thrown = false, ...options }) => {
    const app = new Hono<{ Bindings: HttpBindings }>();
    // The app's own error handler; Hono's default one would print every error it answers with 500.
    app.onError((error, c) => {
      if (!(thrown && error instanceof HTTPException)) return c.json({ error: 'route failed' }, 500);
      const shaped = shapedByApp(error.status);
      return c.json(shaped.body, shaped.status as ContentfulStatusCode);
    });
    if (beforeLimit !== undefined)
      app.use(async (c, next) => {
        await beforeLimit(c.env.incoming);
        await next();
      });
    app.use(
      rateLimit({
        ...options,
        throw: thrown,
        ...(handler === undefined
          ? {}
          : {
              handler: (c, decision) => {
                const answer = handler(decision, c.get('rateLimit'));
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
    app.get('/', (c) => serve(route?.(c.get('rateLimit')) ?? {}, c));
    return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
  },
  { thrown: true },
);

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

describe("Hono's throw mode: the rejection as an HTTPException for app.onError", () => {
  /** An app whose one client has spent its one unit, so its next request is rejected. */
  async function spent(options: { throw: boolean; onError?: Parameters<Hono['onError']>[0] }): Promise<Hono> {
    const limiter = createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }),
      store: new MemoryStore({ clock: () => Date.UTC(2030, 0, 1), autoCleanup: false }),
    });
    const app = new Hono();
    if (options.onError !== undefined) app.onError(options.onError);
    app.use(rateLimit({ limiter, identifier: () => 'client', throw: options.throw, message: 'slow down' }));
    app.get('/', (c) => c.text('ok'));
    assert.equal((await app.request('/')).status, 200);
    return app;
  }
  const rateLimitHeaders = (response: Response) =>
    Object.fromEntries([...response.headers].filter(([name]) => /ratelimit|retry-after/.test(name)));
  /** The rate-limit headers of the 429 the middleware answers itself, outside throw mode. */
  const answeredHere = async () => rateLimitHeaders(await (await spent({ throw: false })).request('/'));

  it("Hono's default error handler answers the middleware's own 429, headers and all", async () => {
    const response = await (await spent({ throw: true })).request('/');
    assert.equal(response.status, 429);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await response.json(), { error: 'Too Many Requests', message: 'slow down' });
    const expected = await answeredHere();
    assert.equal(expected['retry-after'], '1');
    assert.deepEqual(rateLimitHeaders(response), expected);
  });

  it('onError sees the HTTPException and c.get("rateLimit"); the headers reach c.json, a bare Response and getResponse()', async () => {
    const seen: unknown[] = [];
    // Each as an app would write it; only getResponse() carries the headers by itself.
    const answers: Record<string, (error: HTTPException, c: Context) => Response> = {
      'c.json': (_error, c) => c.json({ shaped: true }, 429),
      'a bare Response': () => new Response('shaped', { status: 429 }),
      'getResponse()': (error) => error.getResponse(),
    };
    for (const [how, answer] of Object.entries(answers)) {
      const onError = (error: Error, c: Context) => {
        assert.ok(error instanceof HTTPException, how);
        seen.push([error.status, error.message, c.get('rateLimit')?.remaining]);
        return answer(error, c);
      };
      const response = await (await spent({ throw: true, onError })).request('/');
      assert.equal(response.status, 429, how);
      assert.deepEqual(rateLimitHeaders(response), await answeredHere(), how);
    }
    assert.deepEqual(seen, Array(3).fill([429, 'slow down', 0]));
  });

  it('refuses a `throw` that is not a boolean, and `throw` beside `handler`', () => {
    const refused = (option: string) => (error: { code?: unknown; option?: unknown }) =>
      error.code === 'ERR_TOLLGATE_CONFIG' && error.option === option;
    assert.throws(() => rateLimit({ throw: 'yes' as unknown as boolean }), refused('throw'));
    assert.throws(() => rateLimit({ throw: true, handler: () => new Response() }), refused('throw'));
  });
});
