// The admin suites' fixture: an admin over real HTTP in front of three limiters on one store, on a fixed clock.
import { createServer } from 'node:http';
import { after, before } from 'node:test';
import { createAdmin } from '../../src/admin/index.js';
import { createLimiter, type Limiter } from '../../src/limiter/limiter.js';
import { concurrency } from '../../src/policies/concurrency.js';
import { fixedWindow } from '../../src/policies/fixed-window.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import type { Store } from '../../src/stores/store.js';
import { type ContractApp, listen, silentLogger } from '../../src/testing/adapter-contract.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';

export const TOKEN = 'correct-horse-battery-staple-42';
export const T0 = Date.UTC(2030, 0, 1);
/** Identities that must never appear in admin output: an address, a plain API key, and one stored hashed. */
export const SECRETS = ['1.2.3.4', 'alice-secret-key', 'bob {braces} key'];

export type MakeStore = (clock: () => number) => Store;

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

export interface CallInit {
  readonly method?: string;
  /** null sends no Authorization header. Default: the right token. */
  readonly token?: string | null;
}

export interface Fixture {
  readonly app: ContractApp;
  readonly clock: { now: number };
  /** One token bucket of 5, no lockout: its keys are `api|id`. */
  readonly api: Limiter;
  /** Two windows (`minute` 3, `hour` 10) and a 15-minute lockout after a denial: keys `{login|id}:member`. */
  readonly login: Limiter;
  /** One slot in flight and manual blocks only (`blockMs: 0`): keys `{jobs|id}:concurrency` and `:!lockout`. */
  readonly jobs: Limiter;
  call(path: string, init?: CallInit): Promise<Answer>;
}

export async function withFixture(
  makeStore: MakeStore,
  run: (fixture: Fixture) => Promise<void>,
): Promise<void> {
  const clock = { now: T0 };
  const store = makeStore(() => clock.now);
  const api = createLimiter({
    scope: 'api',
    policy: tokenBucket({ capacity: 5, refillPerSecond: 0 }),
    store,
  });
  // Two policies: keys `{login|id}:minute` and `{login|id}:hour`, so stats must count clients, not keys.
  const login = createLimiter({
    scope: 'login',
    policy: [
      fixedWindow({ limit: 3, windowMs: '1m', name: 'minute' }),
      fixedWindow({ limit: 10, windowMs: '1h', name: 'hour' }),
    ],
    blockMs: '15m',
    store,
  });
  const jobs = createLimiter({
    scope: 'jobs',
    policy: concurrency({ max: 1, leaseMs: '1m' }),
    blockMs: 0,
    store,
  });
  const admin = createAdmin({
    token: TOKEN,
    limiters: [api, login, jobs],
    clock: () => clock.now,
    logger: silentLogger(),
  });
  const app = await listen(
    createServer(async (req, res) => {
      if (!(await admin(req, res))) res.writeHead(418).end();
    }),
  );
  const call = async (path: string, init: CallInit = {}) => {
    const token = init.token === undefined ? TOKEN : init.token;
    const response = await fetch(`${app.url}${path}`, {
      method: init.method ?? 'GET',
      headers: token === null ? {} : { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(5000),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: JSON.parse(text || '{}') };
  };
  try {
    await run({ app, clock, api, login, jobs, call });
  } finally {
    await app.close();
    await store.close?.();
  }
}

export const memoryStores = (): MakeStore => (clock) => new MemoryStore({ clock, autoCleanup: false });

/**
 * Registers a throwaway redis-server for the enclosing suite and returns a maker of stores on it, a prefix per
 * store: stats lists everything under the prefix, and a shared TEST_REDIS_URL may hold more.
 */
export function redisStores(name: string): () => MakeStore {
  let server: RedisServer;
  let stores = 0;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });
  return () => (clock) =>
    new RedisStore({
      url: server.url,
      keyPrefix: `${name}-${process.pid}-${++stores}:`,
      clock,
      commandTimeoutMs: 5000,
    });
}
