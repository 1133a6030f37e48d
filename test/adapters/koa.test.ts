// The adapter contract on Koa 3.
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import Koa, { type Context } from 'koa';
import { rateLimit } from '../../src/adapters/koa.js';
import { listen, type RoutePlan, runAdapterContract, streamedChunks } from '../contract/adapter-contract.js';

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

runAdapterContract('Koa', async ({ handler, beforeLimit, route, requestWasSuccessful, ...options }) => {
  const app = new Koa();
  // Koa would print every error it answers with 500.
  app.silent = true;
  if (beforeLimit !== undefined)
    app.use(async (ctx, next) => {
      await beforeLimit(ctx.req);
      await next();
    });
  app.use(
    rateLimit({
      ...options,
      ...(handler === undefined
        ? {}
        : {
            handler: (ctx, decision) => {
              const answer = handler(decision);
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
  app.use((ctx) => serve(route?.() ?? {}, ctx));
  return listen(createServer(app.callback()));
});
