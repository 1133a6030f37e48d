// The adapter contract on plain node:http (through withRateLimit), and rateLimit's continue/answered result.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { it } from 'node:test';
import { rateLimit, withRateLimit } from '../../src/adapters/node.js';
import { createLimiter } from '../../src/limiter.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { listen, request, runAdapterContract } from '../contract/adapter-contract.js';

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

runAdapterContract('node:http', async ({ handler, beforeLimit, onServed, ...options }) => {
  const limited = withRateLimit(
    {
      ...options,
      ...(handler === undefined
        ? {}
        : {
            handler: (_req, res, decision) => {
              const answer = handler(decision);
              sendJson(res, answer.status, answer.body);
            },
          }),
    },
    (_req, res) => {
      onServed?.();
      sendJson(res, 200, { ok: true });
    },
  );
  return listen(
    createServer(async (req, res) => {
      await beforeLimit?.(req);
      await limited(req, res);
    }),
  );
});

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
