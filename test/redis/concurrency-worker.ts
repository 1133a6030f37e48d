// One process of the concurrency test: its own Redis (or Cluster) connection, a flood on one hot key, a summary.
import { pathToFileURL } from 'node:url';
import { createClient, createCluster } from 'redis';
import {
  type AnyPolicy,
  createLimiter,
  type Decision,
  fixedWindow,
  type Limiter,
  slidingWindow,
  tokenBucket,
} from '../../src/index.js';
import { RedisStore, type RootNode } from '../../src/stores/redis/index.js';

export type Library = 'ioredis' | 'node-redis';

/** A single server, or a cluster to discover from its nodes (the hot key then lives on one of its masters). */
export type StoreTarget = { readonly url: string } | { readonly rootNodes: readonly RootNode[] };

export interface CaseSpec {
  readonly scope: string;
  readonly policy: 'fixed-window' | 'sliding-window' | 'token-bucket';
  /** The window's limit, or the bucket's capacity. */
  readonly limit: number;
  /** Token bucket only. */
  readonly refillPerSecond?: number;
}

export interface WorkerConfig {
  readonly library: Library;
  readonly target: StoreTarget;
  readonly cases: readonly CaseSpec[];
  readonly attempts: number;
  readonly inFlight: number;
}

export interface Tally {
  allowed: number;
  denied: number;
  degraded: number;
  /** The Redis server's clock over this tally's decisions (epoch ms). */
  firstNowMs: number;
  lastNowMs: number;
}

/** Every identifier of the test is this one: all processes fight over a single key per case. */
export const HOT_KEY = 'hot';
export const WINDOW_MS = 60_000;

export function policyFor(spec: CaseSpec): AnyPolicy {
  switch (spec.policy) {
    case 'fixed-window':
      return fixedWindow({ limit: spec.limit, windowMs: WINDOW_MS });
    case 'sliding-window':
      return slidingWindow({ limit: spec.limit, windowMs: WINDOW_MS });
    case 'token-bucket':
      return tokenBucket({ capacity: spec.limit, refillPerSecond: spec.refillPerSecond ?? 0 });
  }
}

export function emptyTally(): Tally {
  return {
    allowed: 0,
    denied: 0,
    degraded: 0,
    firstNowMs: Number.POSITIVE_INFINITY,
    lastNowMs: Number.NEGATIVE_INFINITY,
  };
}

export function count(tally: Tally, decision: Decision): void {
  if (decision.degraded !== undefined) tally.degraded++;
  else if (decision.allowed) tally.allowed++;
  else tally.denied++;
  tally.firstNowMs = Math.min(tally.firstNowMs, decision.nowMs);
  tally.lastNowMs = Math.max(tally.lastNowMs, decision.nowMs);
}

/**
 * A store on a connection of its own: RedisStore's own ioredis connection (`url` or `rootNodes`), or an app-owned
 * node-redis client or cluster. Failing closed with a generous budget means a slow machine shows up as `degraded`
 * decisions (which the test rejects), never as extra admissions.
 */
export async function openStore(
  library: Library,
  target: StoreTarget,
): Promise<{ store: RedisStore; close: () => Promise<void> }> {
  const options = { failOpen: false, commandTimeoutMs: 5_000, connectTimeoutMs: 5_000 };
  if (library === 'ioredis') {
    const store = new RedisStore({ ...options, ...target });
    await store.connect();
    return { store, close: () => store.close() };
  }
  const client =
    'url' in target
      ? createClient({ url: target.url })
      : createCluster({
          rootNodes: target.rootNodes.map((node) =>
            'url' in node ? { url: node.url } : { url: `redis://${node.host}:${node.port}` },
          ),
        });
  await client.connect();
  const store = new RedisStore({ ...options, client });
  return {
    store,
    close: async () => {
      await store.close();
      await client.close();
    },
  };
}

/** `inFlight` lanes share `attempts` consumes, so that many requests are always outstanding. */
async function flood(limiter: Limiter, attempts: number, inFlight: number): Promise<Tally> {
  const tally = emptyTally();
  let started = 0;
  const lane = async () => {
    while (started < attempts) {
      started++;
      count(tally, await limiter.consume(HOT_KEY));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return tally;
}

/** stdin's first line; the parent sends 'go' once every worker is connected, so the floods overlap. */
function startSignal(): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdin.setEncoding('utf8');
    process.stdin.once('data', () => resolve());
    // A parent that died before the start signal must not leave this process waiting forever.
    process.stdin.once('end', () => reject(new Error('stdin closed before the start signal')));
  });
}

async function main(config: WorkerConfig): Promise<void> {
  const { store, close } = await openStore(config.library, config.target);
  const limiters = config.cases.map((spec) =>
    createLimiter({ policy: policyFor(spec), store, scope: spec.scope }),
  );
  process.stdout.write('ready\n');
  await startSignal();
  process.stdin.destroy();
  const tallies = await Promise.all(limiters.map((l) => flood(l, config.attempts, config.inFlight)));
  await close();
  process.stdout.write(`${JSON.stringify(tallies)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(JSON.parse(process.argv[2] ?? '') as WorkerConfig);
}
