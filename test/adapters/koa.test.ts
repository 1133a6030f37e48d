// The adapter contract on Koa 3.
import { createServer } from 'node:http';
import Koa from 'koa';
import { rateLimit } from '../../src/adapters/koa.js';
import { listen, runAdapterContract } from '../contract/adapter-contract.js';

runAdapterContract('Koa', async ({ handler, beforeLimit, onServed, ...options }) => {
  const app = new Koa();
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
    }),
  );
  app.use((ctx) => {
    onServed?.();
    ctx.body = { ok: true };
  });
  return listen(createServer(app.callback()));
});
