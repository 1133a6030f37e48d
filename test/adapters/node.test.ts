// The adapter contract on plain node:http (through withRateLimit), and rateLimit's continue/answered result.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { it } from 'node:test';
import { rateLimit, withRateLimit } from '../../src/adapters/node/node.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import {
  listen,
  type RoutePlan,
  request,
  runAdapterContract,
  STREAMED,
} from '../../src/testing/adapter-contract.js';

function header(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/** Acts out the contract's route plan; what it throws, the server below answers 500. */
async function serve(plan: RoutePlan, res: ServerResponse): Promise<void> {
  res.statusCode = plan.status ?? 200;
  if (plan.verdict !== undefined) res.setHeader('x-verdict', plan.verdict);
  if (plan.stream) {
    res.setHeader('Content-Type', 'text/plain');
    res.write(STREAMED[0]);
    await plan.hold;
    res.end(STREAMED[1]);
    return;
  }
  await plan.hold;
  if (plan.throws) throw new Error('route failed');
  sendJson(res, res.statusCode, { ok: true });
}

runAdapterContract(
  'node:http',
  async ({ handler, beforeLimit, route, requestWasSuccessful, ...options }) => {
    const limited = withRateLimit(
      {
        ...options,
        ...(handler === undefined
          ? {}
          : {
              handler: (req, res, decision) => {
                const answer = handler(decision, req.rateLimit);
                sendJson(res, answer.status, answer.body);
              },
            }),
        ...(requestWasSuccessful === undefined
          ? {}
          : {
              requestWasSuccessful: (_req, res) => requestWasSuccessful(header(res.getHeader('x-verdict'))),
            }),
      },
      (req, res) => serve(route?.(req.rateLimit) ?? {}, res),
    );
    return listen(
      createServer(async (req, res) => {
        try {
          await beforeLimit?.(req);
          await limited(req, res);
        } catch {
          // What a framework's error handling would do.
          sendJson(res, 500, { error: 'route failed' });
        }
      }),
    );
  },
  { thrown: false },
);

it('node:http rateLimit resolves true to continue and false once it has answered', async () => {
  const limiter = createLimiter({
    policy: tokenBucket({ capacity: 1, refillPerSecond: 0 }),
    store: new MemoryStore({ autoCleanup: false }),
  });
  const limit = rateLimit({ limiter });
  const results: boolean[] = [];
  const app = await listen(
    createServer(async (req, res) => {
      const proceed = await limit(req, res);
      results.push(proceed);
      if (proceed) sendJson(res, 200, { ok: true });
    }),
  );
  try {
    assert.equal((await request(app)).status, 200);
    assert.equal((await request(app)).status, 429);
    assert.deepEqual(results, [true, false]);
  } finally {
    await app.close();
  }
});
