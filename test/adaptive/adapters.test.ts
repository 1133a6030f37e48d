// An adaptive limit behind real apps (Express, node:http): its 503, the release as each response ends, partitions.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import express from 'express';
import { rateLimit } from '../../src/adapters/express/express.js';
import { withRateLimit } from '../../src/adapters/node/node.js';
import { type AdaptiveConcurrency, adaptiveConcurrency } from '../../src/adaptive/adaptive-concurrency.js';
import type { GateOptions } from '../../src/gate/options.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { type ContractApp, listen, request, silentLogger } from '../../src/testing/adapter-contract.js';
import { ManualClock, StubAlgorithm } from './stub-algorithm.js';

const BUSY = { error: 'Service Unavailable', message: 'The server is busy, please try again later.' };

/** The route behind the limiter: answers `x-status` (default 200), first waiting for `open` when `x-hold` is set. */
class Route {
  #open: () => void = () => {};
  #held: Promise<void> = new Promise((resolve) => {
    this.#open = resolve;
  });
  #entered: () => void = () => {};
  /** Resolves once a held request has reached the route. */
  entered: Promise<void> = new Promise((resolve) => {
    this.#entered = resolve;
  });

  open(): void {
    this.#open();
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers['x-hold'] !== undefined) {
      this.#entered();
      await this.#held;
    }
    res.writeHead(Number(req.headers['x-status'] ?? 200), { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ ok: true }));
  }
}

type Options = GateOptions<IncomingMessage, ServerResponse>;
type MakeApp = (options: Options, route: Route) => Promise<ContractApp>;

const APPS: Readonly<Record<string, MakeApp>> = {
  Express: async (options, route) => {
    const app = express();
    app.use(rateLimit(options as GateOptions<express.Request, express.Response>));
    app.get('/', (req, res) => route.serve(req, res));
    return listen(createServer(app));
  },
  'node:http': async (options, route) =>
    listen(createServer(withRateLimit(options, (req, res) => route.serve(req, res)))),
};

/** An app of `make` guarded by an adaptive limit at `limit`, on a stub algorithm and a hand-moved clock. */
async function guarded(make: MakeApp, limit: number, partitions?: Record<string, number>) {
  const algorithm = new StubAlgorithm(limit);
  const clock = new ManualClock();
  const policy = adaptiveConcurrency({ algorithm, clock: clock.read, ...(partitions ? { partitions } : {}) });
  const route = new Route();
  const options: Options = {
    policy,
    logger: silentLogger(),
    partition: (req) => req.headers['x-priority'] as string | undefined,
  };
  const app = await make(options, route);
  return { app, algorithm, clock, policy, route };
}

/** Waits until the limit holds `inFlight` requests: a release comes with the response's end, just after it is sent. */
async function holding(policy: AdaptiveConcurrency, inFlight: number): Promise<void> {
  for (let turn = 0; turn < 1000 && policy.inFlight !== inFlight; turn++)
    await new Promise((resolve) => setTimeout(resolve, 1));
  assert.equal(policy.inFlight, inFlight);
}

for (const [name, make] of Object.entries(APPS))
  describe(`adaptive limit on ${name}`, () => {
    it('answers a request beyond the limit 503 with Retry-After and the busy body', async () => {
      const { app, policy, route } = await guarded(make, 1);
      try {
        const held = request(app, { 'x-hold': '1' });
        await route.entered;
        const denied = await request(app);
        assert.equal(denied.status, 503);
        assert.equal(denied.headers.get('retry-after'), '1');
        assert.equal(denied.headers.get('ratelimit-policy'), '1');
        assert.equal(denied.headers.get('ratelimit-remaining'), '0');
        assert.deepEqual(denied.body, BUSY);
        route.open();
        assert.equal((await held).status, 200);
        await holding(policy, 0);
        assert.equal((await request(app)).status, 200);
      } finally {
        await app.close();
      }
    });

    it('answers the busy body and 503 for its denial despite a message, which a store denial answers', async () => {
      const policy = adaptiveConcurrency({ algorithm: new StubAlgorithm(1), clock: new ManualClock().read });
      const route = new Route();
      const app = await make(
        {
          policy: [tokenBucket({ capacity: 2, refillPerSecond: 0 }), policy],
          store: new MemoryStore({ autoCleanup: false }),
          scope: 'custom-message',
          message: 'custom',
          logger: silentLogger(),
        },
        route,
      );
      try {
        const held = request(app, { 'x-hold': '1' });
        await route.entered;
        const busy = await request(app);
        assert.deepEqual([busy.status, busy.body], [503, BUSY]);
        route.open();
        assert.equal((await held).status, 200);
        await holding(policy, 0);
        assert.equal((await request(app)).status, 200);
        await holding(policy, 0);
        const over = await request(app);
        assert.deepEqual([over.status, over.body], [429, { error: 'Too Many Requests', message: 'custom' }]);
      } finally {
        await app.close();
      }
    });

    it('releases each request as its response ends, measuring it with its status', async () => {
      const { app, algorithm, clock, policy, route } = await guarded(make, 2);
      try {
        clock.nowMs = 100;
        const held = request(app, { 'x-hold': '1' });
        await route.entered;
        assert.equal(policy.inFlight, 1);
        clock.nowMs = 130;
        assert.equal((await request(app, { 'x-status': '503' })).status, 503);
        await holding(policy, 1);
        // The held request has not ended yet: only the 503 one has completed.
        assert.equal(policy.stats().partitions[0]?.completed, 1);
        clock.nowMs = 175;
        route.open();
        await held;
        await holding(policy, 0);
        assert.deepEqual(algorithm.samples, [
          { rttMs: 0, inFlight: 2, dropped: true },
          { rttMs: 75, inFlight: 1, dropped: false },
        ]);
        assert.deepEqual(
          [policy.stats().partitions[0]?.completed, policy.stats().partitions[0]?.dropped],
          [2, 1],
        );
      } finally {
        await app.close();
      }
    });

    it('counts a request in the partition its request names', async () => {
      const { app, policy } = await guarded(make, 4, { live: 0.5, batch: 0.25 });
      try {
        for (const priority of ['live', 'live', 'batch', 'other'])
          assert.equal((await request(app, { 'x-priority': priority })).status, 200);
        assert.equal((await request(app)).status, 200);
        await holding(policy, 0);
        assert.deepEqual(
          policy.stats().partitions.map(({ name, completed }) => [name, completed]),
          [
            ['live', 2],
            ['batch', 1],
            ['', 2],
          ],
        );
      } finally {
        await app.close();
      }
    });
  });
