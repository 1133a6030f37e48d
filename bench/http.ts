// Section 3: Express answering over loopback with no limiter, with Tollgate and with the peers; autocannon in a child.
import { fork } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { rateLimit } from '../src/adapters/express/express.js';
import { MemoryStore } from '../src/index.js';
import { RedisStore } from '../src/stores/redis/index.js';
import { KEYS } from './direct.js';
import type { LoadReply, LoadRequest } from './http-load.js';
import { collectGarbage } from './load.js';
import type { BenchRedis } from './redis.js';
import { count, fixed, median, ratio, type Table } from './table.js';

export interface HttpSettings {
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
}

export interface HttpMeasure {
  readonly name: string;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  /** Responses other than 200, and socket errors: both should be 0 (the quotas are never reached). */
  readonly failures: number;
}

const LIMIT = 1_000_000;
// An hour, as in the direct section: no store's expiry work (per-key timers, sweeps) falls inside a run.
const WINDOW_MS = 3_600_000;
const DURATION_S = WINDOW_MS / 1000;

interface Variant {
  readonly name: string;
  readonly middleware?: (redis: BenchRedis) => Promise<RequestHandler>;
}

/** rate-limiter-flexible ships no middleware: this is the one its README shows. */
function flexibleMiddleware(limiter: RateLimiterMemory | RateLimiterRedis): RequestHandler {
  return (req, res, next) => {
    limiter.consume(req.ip as string).then(
      () => next(),
      () => res.status(429).send('Too Many Requests'),
    );
  };
}

export const NO_LIMITER = 'Express, no limiter';
export const TOLLGATE_MEMORY = 'Tollgate, MemoryStore';

const VARIANTS: readonly Variant[] = [
  { name: NO_LIMITER },
  {
    name: TOLLGATE_MEMORY,
    middleware: async () => rateLimit({ requestsPerMinute: LIMIT, store: new MemoryStore() }),
  },
  {
    // The two fields of the current draft in place of the default seven (draft-6 and the X-RateLimit-* set).
    name: "Tollgate, MemoryStore, headers: 'draft-8'",
    middleware: async () =>
      rateLimit({ requestsPerMinute: LIMIT, store: new MemoryStore(), headers: 'draft-8' }),
  },
  {
    name: 'Tollgate, RedisStore (ioredis)',
    middleware: async (redis) =>
      rateLimit({
        requestsPerMinute: LIMIT,
        // As in the direct section: a loaded machine must not turn slow answers into fail-open ones.
        store: new RedisStore({ client: await redis.ioredis(), commandTimeoutMs: 2000 }),
      }),
  },
  {
    name: 'express-rate-limit, MemoryStore',
    middleware: async () => expressRateLimit({ windowMs: WINDOW_MS, limit: LIMIT }),
  },
  {
    name: 'express-rate-limit + rate-limit-redis (ioredis)',
    middleware: async (redis) => {
      const client = await redis.ioredis();
      const store = new RateLimitRedisStore({
        sendCommand: (command: string, ...args: string[]) =>
          client.call(command, ...args) as Promise<RedisReply>,
      });
      return expressRateLimit({ windowMs: WINDOW_MS, limit: LIMIT, store });
    },
  },
  {
    name: 'rate-limiter-flexible, memory',
    middleware: async () =>
      flexibleMiddleware(new RateLimiterMemory({ points: LIMIT, duration: DURATION_S })),
  },
  {
    name: 'rate-limiter-flexible, Redis (ioredis)',
    middleware: async (redis) =>
      flexibleMiddleware(
        new RateLimiterRedis({ storeClient: await redis.ioredis(), points: LIMIT, duration: DURATION_S }),
      ),
  },
];

/** A forked autocannon process, asked for one run at a time. */
export function loadGenerator() {
  const child = fork(new URL('./http-load.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
  return {
    run(request: LoadRequest): Promise<LoadReply> {
      return new Promise((resolve, reject) => {
        child.once('message', (message: { reply?: LoadReply; error?: string }) => {
          if (message.reply === undefined) reject(new Error(`load generator: ${message.error}`));
          else resolve(message.reply);
        });
        child.send(request);
      });
    },
    stop: () => child.kill(),
  };
}

export async function runHttp(redis: BenchRedis, settings: HttpSettings): Promise<HttpMeasure[]> {
  const servers = await Promise.all(
    VARIANTS.map(async (variant) => {
      const app = express();
      app.set('trust proxy', 1);
      if (variant.middleware !== undefined) app.use(await variant.middleware(redis));
      app.get('/', (_req, res) => {
        res.send('ok');
      });
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      return { variant, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
    }),
  );
  const load = loadGenerator();
  const samples = new Map(VARIANTS.map((v) => [v, [] as LoadReply[]]));
  try {
    // As in the direct section, each run starts from a collected heap: no run pays for another's garbage.
    const ask = (url: string, seconds: number) => {
      collectGarbage();
      return load.run({ url, connections: settings.connections, seconds, keys: KEYS });
    };
    for (const { url } of servers) await ask(url, settings.warmupSeconds);
    for (let round = 0; round < settings.rounds; round++) {
      // Rotated each round, like the direct section, so no variant always runs right after the same one.
      const shift = round % servers.length;
      for (const { variant, url } of [...servers.slice(shift), ...servers.slice(0, shift)]) {
        samples.get(variant)?.push(await ask(url, settings.seconds));
      }
    }
  } finally {
    load.stop();
    await Promise.all(servers.map(({ server }) => new Promise((resolve) => server.close(resolve))));
  }
  return VARIANTS.map((variant) => {
    const runs = samples.get(variant) ?? [];
    const of = (pick: (r: LoadReply) => number) => median(runs.map(pick));
    return {
      name: variant.name,
      rps: of((r) => r.rps),
      p50Ms: of((r) => r.p50Ms),
      p95Ms: of((r) => r.p95Ms),
      p99Ms: of((r) => r.p99Ms),
      failures: runs.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    };
  });
}

export function httpTable(measures: readonly HttpMeasure[], settings: HttpSettings): Table {
  const bare = measures.find((m) => m.name === NO_LIMITER);
  return {
    title: `3. HTTP: Express 5, ${settings.connections} connections, ${count(KEYS)} clients (rounds of ${settings.seconds} s, medians)`,
    columns: ['server', 'rps', 'p50 ms', 'p95 ms', 'p99 ms', 'added p50 ms', 'rps vs no limiter', 'failed'],
    rows: measures.map((m) => [
      m.name,
      count(m.rps),
      fixed(m.p50Ms, 2),
      fixed(m.p95Ms, 2),
      fixed(m.p99Ms, 2),
      fixed(m.p50Ms - (bare?.p50Ms ?? Number.NaN), 2),
      ratio(m.rps / (bare?.rps ?? Number.NaN)),
      count(m.failures),
    ]),
    notes: [
      'autocannon runs in a child process against 127.0.0.1; each request carries one of the clients in',
      "X-Forwarded-For, which the apps trust (one proxy hop). Every limiter runs with its library's defaults and a",
      'quota never reached; rate-limiter-flexible, which ships no middleware, with the one its README shows.',
    ],
  };
}
