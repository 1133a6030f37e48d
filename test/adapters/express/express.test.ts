// The adapter contract on Express 5 and Express 4, plus Express's own trust-proxy safeguards.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import express, { type NextFunction, type Request, type Response } from 'express';
import express4 from 'express4';
import { rateLimit } from '../../../src/adapters/express/express.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import { tokenBucket } from '../../../src/policies/token-bucket.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import {
  listen,
  type MakeApp,
  type RoutePlan,
  request,
  runAdapterContract,
  STREAMED,
  silentLogger,
  unitsLeft,
} from '../../../src/testing/adapter-contract.js';
import { forgeryTable, SETTINGS } from './trust-proxy-forgery.js';

/** Acts out the contract's route plan; a throw goes to the app's error handler. */
async function serve(plan: RoutePlan, res: Response): Promise<void> {
  res.status(plan.status ?? 200);
  if (plan.verdict !== undefined) res.set('x-verdict', plan.verdict);
  if (plan.stream) {
    res.type('text/plain').write(STREAMED[0]);
    await plan.hold;
    res.end(STREAMED[1]);
    return;
  }
  await plan.hold;
  if (plan.throws) throw new Error('route failed');
  res.json({ ok: true });
}

function expressApp(createApp: typeof express): MakeApp {
  return async ({ handler, beforeLimit, route, requestWasSuccessful, ...options }) => {
    const app = createApp();
    if (beforeLimit !== undefined)
      app.use((req, _res, next) => {
        beforeLimit(req).then(() => next(), next);
      });
    app.use(
      rateLimit({
        ...options,
        ...(handler === undefined
          ? {}
          : {
              handler: (req, res, _next, decision) => {
                const answer = handler(decision, req.rateLimit);
                res.status(answer.status).json(answer.body);
              },
            }),
        ...(requestWasSuccessful === undefined
          ? {}
          : { requestWasSuccessful: (_req, res) => requestWasSuccessful(res.get('x-verdict')) }),
      }),
    );
    app.get('/', (req, res, next) => {
      serve(route?.(req.rateLimit) ?? {}, res).catch(next);
    });
    // Express 4 and 5 alike answer 500 through an error handler (the default one would print the stack).
    app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      res.status(500).json({ error: 'route failed' });
    });
    return listen(createServer(app));
  };
}

for (const [name, createApp] of [
  ['Express 5', express],
  ['Express 4', express4],
] as const) {
  runAdapterContract(name, expressApp(createApp), { thrown: false });

  describe(`${name}: X-Forwarded-For while 'trust proxy' is off`, () => {
    it('warns exactly once, and a spoofed header does not pick the bucket', async () => {
      const limiter = createLimiter({
        policy: tokenBucket({ capacity: 2, refillPerSecond: 0 }),
        store: new MemoryStore({ autoCleanup: false }),
      });
      const logger = silentLogger();
      const app = await expressApp(createApp)({ limiter, logger });
      try {
        const statuses = [];
        for (const spoofed of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
          statuses.push((await request(app, { 'X-Forwarded-For': spoofed })).status);
        }
        assert.deepEqual(statuses, [200, 200, 429]);
        assert.equal(logger.warn.mock.callCount(), 1);
        assert.match(String(logger.warn.mock.calls[0]?.arguments[0]), /trust proxy/);
        assert.equal(await unitsLeft(limiter), 0);
        assert.equal(await unitsLeft(limiter, '203.0.113.1'), 2);
      } finally {
        await app.close();
      }
    });
  });
}

describe("tollgate/express: a 'trust proxy' that lets a client pick its own address", () => {
  for (const [setting, forwarded] of [
    [true, '203.0.113.1'],
    [3, '203.0.113.1'],
  ] as const)
    it(`'trust proxy' ${setting} with X-Forwarded-For ${forwarded}: warned of once, naming the forgery`, async () => {
      const logger = silentLogger();
      const app = express();
      app.set('trust proxy', setting);
      app.use(rateLimit({ requestsPerMinute: 10, store: new MemoryStore({ autoCleanup: false }), logger }));
      app.get('/', (_req, res) => {
        res.send('ok');
      });
      const server = await listen(createServer(app));
      try {
        for (const address of [forwarded, '203.0.113.2', '203.0.113.3'])
          await request(server, { 'X-Forwarded-For': address });
        assert.equal(logger.warn.mock.callCount(), 1);
        assert.match(String(logger.warn.mock.calls[0]?.arguments[0]), /forge.*any identity/);
      } finally {
        await server.close();
      }
    });

  for (const [name, createApp] of [
    ['Express 5', express],
    ['Express 4', express4 as unknown as typeof express],
  ] as const)
    it(`${name}: warned of exactly where a client-added X-Forwarded-For entry would be req.ip`, async () => {
      const rows = await forgeryTable(createApp, SETTINGS, () => {
        const logger = silentLogger();
        const store = new MemoryStore({ autoCleanup: false });
        return {
          handler: rateLimit({ requestsPerMinute: 10, store, logger }),
          warned: () => logger.warn.mock.calls.some((call) => /forge/.test(String(call.arguments[0]))),
        };
      });
      for (const row of rows) assert.equal(row.warned, row.believed, JSON.stringify(row));
      // No proxy at all under 'trust proxy' 1, and two trusted behind one: both let a client pick its address.
      const at = (trust: unknown, entries: number) =>
        rows.find((row) => row.trust === trust && row.entries === entries);
      assert.deepEqual([at(1, 0)?.warned, at(2, 1)?.warned, at(1, 1)?.warned], [true, true, false]);
    });
});
