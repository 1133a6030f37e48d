// The demo application: one route per walkthrough in the seed documents, each behind the limits it describes.
import express, { type Express } from 'express';
import { rateLimit } from '../adapters/express.js';
import type { Logger } from '../gate.js';
import { fixedWindow } from '../policies/fixed-window.js';
import { slidingWindow } from '../policies/sliding-window.js';
import { tokenBucket } from '../policies/token-bucket.js';
import type { Store } from '../stores/store.js';
import { simulatorRouter } from './simulator.js';

export interface DemoOptions {
  readonly store: Store;
  /** Names the instance in every response, so two instances behind one Redis can be told apart. */
  readonly serverId?: string;
  readonly logger?: Logger;
  /** Extra checks for `GET /health` (the Redis demo adds Redis reachability). */
  readonly health?: () => Promise<{ readonly ok: boolean; readonly [field: string]: unknown }>;
}

/** Routes that no limiter counts. */
const UNLIMITED = new Set(['/api/public-data', '/health', '/api/simulate']);

export function createDemoApp(options: DemoOptions): Express {
  const { store, serverId = 'primary', logger = console } = options;
  const app = express();
  app.disable('x-powered-by');
  const limit = (scope: string, policy: Parameters<typeof rateLimit>[0]) =>
    rateLimit({ ...policy, scope, store, logger });
  const ok = (route: string) => (_req: express.Request, res: express.Response) => {
    res.json({ ok: true, route, server: serverId, timestamp: new Date().toISOString() });
  };

  app.use(simulatorRouter());
  app.get('/health', async (_req, res) => {
    const extra = options.health === undefined ? { ok: true } : await options.health();
    res
      .status(extra.ok ? 200 : 503)
      .json({ status: extra.ok ? 'ok' : 'degraded', server: serverId, ...extra });
  });
  app.get('/api/public-data', ok('/api/public-data'));

  // The aggregate net: mounted before every limited route; looser than anything beneath it.
  app.use('/api', limit('global', { requestsPerMinute: 300, skip: (req) => UNLIMITED.has(req.originalUrl) }));

  // Seed 002: five per minute on the expensive route, while /api/cheap only has the aggregate.
  app.get('/api/expensive', limit('expensive', { requestsPerMinute: 5 }), ok('/api/expensive'));
  app.get('/api/cheap', ok('/api/cheap'));
  // Seed 000: a burst of 5, refilling one token every two seconds.
  app.get(
    '/api/sensitive-action',
    limit('sensitive', { policy: tokenBucket({ capacity: 5, refillPerSecond: 0.5 }) }),
    ok('/api/sensitive-action'),
  );
  // Seed 001: the three algorithms side by side, 5 per 10 s and a bucket of 5 at 1/s.
  app.get(
    '/api/fixed-test',
    limit('fixed', { policy: fixedWindow({ limit: 5, windowMs: '10s' }) }),
    ok('/api/fixed-test'),
  );
  app.get(
    '/api/sliding-test',
    limit('sliding', { policy: slidingWindow({ limit: 5, windowMs: '10s' }) }),
    ok('/api/sliding-test'),
  );
  app.get(
    '/api/token-bucket-test',
    limit('token', { policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }) }),
    ok('/api/token-bucket-test'),
  );
  // Seed 003: 10 tokens per IP, 1 per second.
  app.get(
    '/api/data',
    limit('data', { policy: tokenBucket({ capacity: 10, refillPerSecond: 1 }) }),
    ok('/api/data'),
  );
  return app;
}
