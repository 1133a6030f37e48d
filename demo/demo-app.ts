// The demo application: one route per common case (a strict route, bursts, each algorithm, tiers), each behind its limits.
import { randomBytes } from 'node:crypto';
import express, { type Express, type Request } from 'express';
import { type ExpressRateLimitOptions, rateLimit } from '../src/adapters/express/express.js';
import { adminMiddleware } from '../src/admin/express.js';
import { addressIdentity } from '../src/identity/address-identity.js';
import { apiKeyId, apiKeyIdentity } from '../src/identity/api-key-identity.js';
import { identifierHasher } from '../src/identity/identifier-hash.js';
import { createLimiter, type Limiter } from '../src/limiter/limiter.js';
import type { AnyPolicy } from '../src/policies/policy.js';
import { tokenBucket } from '../src/policies/token-bucket.js';
import { LIVE_ROUTES, liveLimiter } from '../src/simulator/server/live-routes.js';
import { simulatorHandler } from '../src/simulator/server/simulator-handler.js';
import type { Store } from '../src/stores/store.js';
import { createMetrics } from '../src/telemetry/prometheus/create-metrics.js';
import { createDemoLogger } from './demo-logger.js';
import { type DemoLogger, requestLog } from './request-log.js';

export interface DemoOptions {
  /** A store that reports its own figures (MemoryStore, RedisStore), which /metrics exports beside the decisions. */
  readonly store: Store & Required<Pick<Store, 'stats'>>;
  /** Names the instance in every response, so two instances behind one Redis can be told apart. */
  readonly serverId?: string;
  /** Default: pino to stdout (`createDemoLogger`). */
  readonly logger?: DemoLogger;
  /** Extra checks for `GET /health` (the Redis demo adds Redis reachability). */
  readonly health?: () => Promise<{ readonly ok: boolean; readonly [field: string]: unknown }>;
  /** The admin routes exist only with a token (ADMIN_TOKEN); a token under 16 characters throws. */
  readonly adminToken?: string;
  /** Recognised API keys (API_KEYS). Default DEFAULT_API_KEYS. */
  readonly apiKeys?: readonly string[];
  /** The keys on the paid tier of /api/tiered (PAID_API_KEYS). Default: `defaultPaidApiKeys(apiKeys)`. */
  readonly paidApiKeys?: readonly string[];
  /** Log raw client IPs (LOG_CLIENT_IPS=1) rather than keyed hashes. */
  readonly logClientIps?: boolean;
  /** Epoch ms for the admin failure throttle; for tests. */
  readonly clock?: () => number;
}

export const DEFAULT_API_KEYS: readonly string[] = ['demo-key-1', 'demo-key-2'];
const DEFAULT_PAID_API_KEY = 'demo-key-2';

/** The paid tier when none is named: the default paid key, if it is one of the API keys, else none. */
export function defaultPaidApiKeys(apiKeys: readonly string[]): readonly string[] {
  return apiKeys.includes(DEFAULT_PAID_API_KEY) ? [DEFAULT_PAID_API_KEY] : [];
}

/**
 * Routes that answer in the words of the rate-limiting tutorials whose examples they reproduce, so that a reader
 * trying one of those against the demo sees the bodies the tutorial shows. Every other route answers
 * `{ ok, route, server, timestamp }`.
 */
const TUTORIAL_ANSWERS: Readonly<Record<string, () => object>> = {
  '/api/public-data': () => ({ message: 'This is an unthrottled public endpoint.' }),
  '/api/sensitive-action': () => ({
    success: true,
    data: 'Access granted to resource.',
    timestamp: new Date().toISOString(),
  }),
  '/api/data': () => ({ message: 'Here is your data' }),
};
/** The 429 message of those routes whose tutorial words its own (the body is `{ error, message }`). */
const TUTORIAL_REJECTIONS: Readonly<Record<string, string>> = {
  '/api/sensitive-action': 'You have exceeded your request quota. Please wait before retrying.',
};

/** Routes that no limiter counts. */
const UNLIMITED = new Set(['/api/public-data', '/api/simulate']);
/** The longest /api/slow may take: enough to watch a drain, never a way to pin a connection for long. */
const MAX_SLOW_MS = 5_000;

export function createDemoApp(options: DemoOptions): Express {
  const { store, serverId = 'primary', logger = createDemoLogger() } = options;
  const apiKeys = options.apiKeys ?? DEFAULT_API_KEYS;
  const paidIdentities = new Set((options.paidApiKeys ?? defaultPaidApiKeys(apiKeys)).map(apiKeyId));
  // A recognised API key names the client; any other key counts as no key, i.e. the IP, so made-up keys mint nothing.
  const identify = apiKeyIdentity<Request>({ keys: apiKeys, fallback: (req) => addressIdentity(req.ip) });
  // Keyed by the admin token when there is one, so logs and admin stats of every instance give the same hashes.
  const hasher = identifierHasher(options.adminToken ?? randomBytes(32));
  const metrics = createMetrics({
    storeHealth: async () => (await options.health?.())?.ok ?? true,
    stores: [store],
  });
  const log = requestLog({ logger, clientIps: options.logClientIps ?? false, hasher });
  const limiter = (scope: string, policy: AnyPolicy): Limiter => createLimiter({ scope, policy, store });
  const limiters = {
    // The aggregate net: looser than anything beneath it.
    global: limiter('global', tokenBucket({ requestsPerMinute: 300 })),
    // Tiers: free 10 per minute and paid 100.
    free: limiter('tier-free', tokenBucket({ requestsPerMinute: 10 })),
    paid: limiter('tier-paid', tokenBucket({ requestsPerMinute: 100 })),
    // A limit being tried out: counted, logged and measured, never enforced.
    shadow: limiter('shadow', tokenBucket({ requestsPerMinute: 3 })),
  };
  // The simulator's live mode routes (each algorithm side by side, bursts, a strict route), limited as
  // `tollgate simulate` limits them, and here also by the aggregate and logged and measured like every route.
  const live = LIVE_ROUTES.map((route) => ({ ...route, limiter: liveLimiter(route, store) }));
  const limit = (chosen: Limiter, extra: Omit<ExpressRateLimitOptions, 'limiter'> = {}) =>
    rateLimit({
      limiter: chosen,
      identifier: identify,
      logger,
      onDecision: (event, req) => {
        metrics.onDecision(event);
        log.onDecision(event, req);
      },
      ...extra,
    });
  // A route that stands for slow work answers after `holdMs`, so that requests overlap and hold their slots.
  const held =
    (holdMs = 0): express.RequestHandler =>
    (_req, _res, next) => {
      if (holdMs === 0) next();
      else setTimeout(next, holdMs);
    };
  // A route's answer once it is let through.
  const ok = (route: string): ((req: express.Request, res: express.Response) => void) => {
    const tutorial = TUTORIAL_ANSWERS[route];
    if (tutorial !== undefined) return (_req, res) => void res.json(tutorial());
    return (_req, res) => {
      res.json({ ok: true, route, server: serverId, timestamp: new Date().toISOString() });
    };
  };

  const app = express();
  app.disable('x-powered-by');
  app.use(log.middleware);
  if (options.adminToken !== undefined) {
    // Before the API limiters: admin requests have their own throttle and spend no API quota.
    app.use(
      adminMiddleware({
        token: options.adminToken,
        limiters: [...Object.values(limiters), ...live.map((route) => route.limiter)],
        store,
        // A URL may name a client by API key (or its `key:` identity) as well as by address.
        identify: (id) => (apiKeys.includes(id) ? apiKeyId(id) : addressIdentity(id)),
        logger,
        ...(options.clock === undefined ? {} : { clock: options.clock }),
      }),
    );
  }
  // The page and POST /api/simulate; the live routes are this app's own, below.
  app.use(simulatorHandler({ logger }));
  app.get('/health', async (_req, res) => {
    const extra = options.health === undefined ? { ok: true } : await options.health();
    res
      .status(extra.ok ? 200 : 503)
      .json({ status: extra.ok ? 'ok' : 'degraded', server: serverId, ...extra });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  // Total, allowed and blocked at a glance.
  app.get('/metrics.json', async (_req, res) => {
    res.json(await metrics.totals());
  });
  app.get('/api/public-data', ok('/api/public-data'));
  // Mounted before every limited route, so it counts them all.
  app.use('/api', limit(limiters.global, { skip: (req) => UNLIMITED.has(req.originalUrl) }));
  for (const route of live) {
    const message = TUTORIAL_REJECTIONS[route.path];
    const extra = message === undefined ? {} : { message };
    app.get(route.path, limit(route.limiter, extra), held(route.holdMs), ok(route.path));
  }
  // Only the aggregate: next to /api/expensive's 5 per minute, what a route without a limit of its own gets.
  app.get('/api/cheap', ok('/api/cheap'));
  app.get(
    '/api/tiered',
    limit(limiters.free, {
      tiers: {
        resolve: async (req) => (paidIdentities.has(String(await identify(req))) ? 'paid' : undefined),
        limiters: { paid: limiters.paid },
      },
    }),
    ok('/api/tiered'),
  );
  app.get('/api/shadow-test', limit(limiters.shadow, { shadow: true }), ok('/api/shadow-test'));
  // Answers after ?ms= (at most MAX_SLOW_MS): an in-flight request to watch a graceful shutdown drain.
  app.get('/api/slow', (req, res) => {
    const ms = Math.min(MAX_SLOW_MS, Math.max(0, Number(req.query.ms) || 0));
    setTimeout(() => ok('/api/slow')(req, res), ms);
  });
  return app;
}
