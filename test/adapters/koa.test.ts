// The adapter contract on Koa 3, and its throw mode under Koa's own error handling.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import Koa, { type Context } from 'koa';
import { type KoaRateLimitOptions, rateLimit } from '../../src/adapters/koa/koa.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import {
  type ContractApp,
  listen,
  type RoutePlan,
  request,
  runAdapterContract,
  shapedByApp,
  streamedChunks,
} from '../../src/testing/adapter-contract.js';

/** Acts out the contract's route plan; what it throws, Koa answers 500. */
async function serve(plan: RoutePlan, ctx: Context): Promise<void> {
  ctx.status = plan.status ?? 200;
  if (plan.verdict !== undefined) ctx.set('x-verdict', plan.verdict);
  if (plan.stream) {
    ctx.type = 'text/plain';
    ctx.body = Readable.from(streamedChunks(plan));
    return;
  }
  await plan.hold;
  if (plan.throws) throw new Error('route failed');
  ctx.body = { ok: true };
}

runAdapterContract(
  'Koa',
  async ({ handler, beforeLimit, route, requestWasSuccessful, thrown = false, ...options }) => {
    const app = new Koa();
    // Koa would print every error it answers with 500.
    app.silent = true;
    // The app's own error middleware: an error with an HTTP status is shaped here, any other Koa answers 500.
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        const { status } = error as { status?: unknown };
        if (!thrown || typeof status !== 'number') throw error;
        const shaped = shapedByApp(status);
        ctx.status = shaped.status;
        ctx.body = shaped.body;
      }
    });
    if (beforeLimit !== undefined)
      app.use(async (ctx, next) => {
        await beforeLimit(ctx.req);
        await next();
      });
    app.use(
      rateLimit({
        ...options,
        throw: thrown,
        ...(handler === undefined
          ? {}
          : {
              handler: (ctx, decision) => {
                const answer = handler(decision, ctx.state.rateLimit);
                ctx.status = answer.status;
                ctx.body = answer.body;
              },
            }),
        ...(requestWasSuccessful === undefined
          ? {}
          : {
              requestWasSuccessful: (_ctx, response) =>
                requestWasSuccessful(response.get('x-verdict') || undefined),
            }),
      }),
    );
    app.use((ctx) => serve(route?.(ctx.state.rateLimit) ?? {}, ctx));
    return listen(createServer(app.callback()));
  },
  { thrown: true },
);

describe("Koa's throw mode: the rejection thrown as ctx.throw would, for the app's error middleware", () => {
  /** An app whose one client has spent its one unit, so its next request is rejected. */
  async function spent(options: KoaRateLimitOptions, errors?: Koa.Middleware): Promise<ContractApp> {
    const limiter = createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }),
      store: new MemoryStore({ clock: () => Date.UTC(2030, 0, 1), autoCleanup: false }),
    });
    const app = new Koa();
    if (errors !== undefined) app.use(errors);
    app.use(rateLimit({ limiter, ...options }));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    const served = await listen(createServer(app.callback()));
    assert.equal((await request(served)).status, 200);
    return served;
  }
  /** The rejection's rate-limit headers when the middleware answers it itself, outside throw mode. */
  async function answeredHere(): Promise<Record<string, string>> {
    const app = await spent({});
    try {
      return rateLimitFields((await request(app)).headers);
    } finally {
      await app.close();
    }
  }
  const rateLimitFields = (headers: Headers) =>
    Object.fromEntries([...headers].filter(([name]) => /ratelimit|retry-after/.test(name)));

  it("Koa's default error handler answers the message as text, with the rate-limit headers from err.headers", async () => {
    const expected = await answeredHere();
    assert.equal(expected['retry-after'], '1');
    const cases: [KoaRateLimitOptions, number, string][] = [
      [{ throw: true }, 429, 'Too many requests, please try again later.'],
      [{ throw: true, message: { code: 'SLOW_DOWN' } }, 429, 'Too Many Requests'],
      [{ throw: true, statusCode: 503, message: 'busy' }, 503, 'busy'],
    ];
    for (const [options, status, text] of cases) {
      const app = await spent(options);
      try {
        const denied = await request(app);
        assert.deepEqual([denied.status, denied.body], [status, text]);
        assert.deepEqual(rateLimitFields(denied.headers), expected);
      } finally {
        await app.close();
      }
    }
  });

  it('the error middleware gets an http-errors error (status, expose, headers) and ctx.state.rateLimit', async () => {
    const caught: unknown[] = [];
    const app = await spent({ throw: true }, async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        const { status, expose, headers, message } = error as Record<string, unknown>;
        caught.push({ status, expose, headers, message, remaining: ctx.state.rateLimit?.remaining });
        ctx.status = 429;
        ctx.body = { shaped: true };
      }
    });
    try {
      const denied = await request(app);
      assert.deepEqual([denied.status, denied.body], [429, { shaped: true }]);
      const expected = rateLimitFields(denied.headers);
      assert.equal(caught.length, 1);
      const [{ headers, ...rest }] = caught as [{ headers: Record<string, string> }];
      assert.deepEqual(rest, {
        status: 429,
        expose: true,
        message: 'Too many requests, please try again later.',
        remaining: 0,
      });
      assert.deepEqual(rateLimitFields(new Headers(headers)), expected);
      assert.deepEqual(expected, await answeredHere());
    } finally {
      await app.close();
    }
  });

  it('refuses a `throw` that is not a boolean, and `throw` beside `handler`', () => {
    const refused = (error: { code?: unknown; option?: unknown }) =>
      error.code === 'ERR_TOLLGATE_CONFIG' && error.option === 'throw';
    assert.throws(() => rateLimit({ throw: 1 as unknown as boolean }), refused);
    assert.throws(() => rateLimit({ throw: true, handler: () => {} }), refused);
  });
});
