// One process of the concurrency-limit test: hammers a concurrency limit and counts its holders, or takes slots and waits to be killed.
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { type AnyPolicy, concurrency, createLimiter, type Limiter, tokenBucket } from '../../src/index.js';
import { BUILT_IN_ENGINE } from '../../src/stores/redis/engine/engine.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { plantedClient } from '../harness/planted-client.js';
import type { StoreTarget } from './concurrency-worker.js';

const { script: SCRIPT } = BUILT_IN_ENGINE;

/** One limiter: a concurrency limit alone, or behind a token bucket that never refills (so its spend is exact). */
export interface LimitCase {
  readonly scope: string;
  /** The bucket's capacity when the limiter has one. */
  readonly burst?: number;
  readonly ids: readonly string[];
}

/** A text of the store's script swapped for another, to see the test fail on a wrong engine. */
export interface Plant {
  readonly from: string;
  readonly to: string;
}

interface Common {
  readonly target: StoreTarget;
  readonly keyPrefix: string;
  readonly max: number;
  readonly leaseMs: number;
  readonly cases: readonly LimitCase[];
}

export interface HammerConfig extends Common {
  readonly mode: 'hammer';
  /** Requests in flight per identifier in this process. */
  readonly lanes: number;
  /** Admissions this process makes per identifier before it stops. */
  readonly admissions: number;
  readonly maxHoldMs: number;
  /** Epoch ms after which a lane gives up: the test is bounded even if the limit never admits. */
  readonly deadline: number;
  readonly plant?: Plant;
}

export interface HoldConfig extends Common {
  readonly mode: 'hold';
  /** Pause between two slots taken, so that each comes back at its own time. */
  readonly gapMs: number;
}

export type LimitWorkerConfig = HammerConfig | HoldConfig;

/** One identifier's figures in one hammering process. */
export interface HammerTally {
  admitted: number;
  denied: number;
  degraded: number;
  /** The most holders the shared counter showed just after one of this process's admissions. */
  peak: number;
  /** The extremes of the denials' retry times. */
  minRetryMs: number;
  maxRetryMs: number;
}

/** Per case, per identifier: what a hold worker took, as the store's clock at each admission. */
export type Held = Record<string, Record<string, number[]>>;

export function limiterFor(spec: LimitCase, max: number, leaseMs: number, store: RedisStore): Limiter {
  const slots = concurrency({ max, leaseMs, name: 'slots' });
  const policy: AnyPolicy[] =
    spec.burst === undefined
      ? [slots]
      : [tokenBucket({ capacity: spec.burst, refillPerSecond: 0, name: 'burst' }), slots];
  return createLimiter({ policy, store, scope: spec.scope });
}

/** The key counting an identifier's holders, beside (never inside) the store's own keys. */
export function holdersKey(keyPrefix: string, scope: string, id: string): string {
  return `holders:${keyPrefix}${scope}:${id}`;
}

/** A plain ioredis client on the target: a single server, or a cluster it discovers. */
export function rawClient(target: StoreTarget): Redis | Cluster {
  return 'url' in target
    ? new Redis(target.url)
    : new Cluster(target.rootNodes.map((node) => ('url' in node ? node.url : node)));
}

/** The script with `plant` applied; refuses a plant whose text is not found exactly once. */
export function plantedScript(plant: Plant): string {
  if (SCRIPT.split(plant.from).length !== 2) throw new Error(`plant text not found once: ${plant.from}`);
  return SCRIPT.replace(plant.from, plant.to);
}

/**
 * A store failing closed with a generous budget, so that a slow machine shows up as `degraded` decisions (which the
 * test rejects), never as extra admissions. With a plant, the store runs on an app-owned client sending the altered
 * script.
 */
export async function openLimitStore(
  target: StoreTarget,
  keyPrefix: string,
  options: { plant?: Plant; localDenyCache?: number } = {},
): Promise<{ store: RedisStore; close: () => Promise<void> }> {
  const base = { keyPrefix, failOpen: false, commandTimeoutMs: 5_000, connectTimeoutMs: 5_000 };
  const tuned =
    options.localDenyCache === undefined ? base : { ...base, localDenyCache: options.localDenyCache };
  if (options.plant === undefined) {
    const store = new RedisStore({ ...tuned, ...target });
    await store.connect();
    return { store, close: () => store.close() };
  }
  const client = rawClient(target);
  const store = new RedisStore({ ...tuned, client: plantedClient(client, plantedScript(options.plant)) });
  await store.connect();
  return {
    store,
    close: async () => {
      await store.close();
      client.disconnect();
    },
  };
}

function emptyTally(): HammerTally {
  return {
    admitted: 0,
    denied: 0,
    degraded: 0,
    peak: 0,
    // Finite, so that they survive JSON.
    minRetryMs: Number.MAX_SAFE_INTEGER,
    maxRetryMs: -1,
  };
}

/**
 * Consumes until this process has its admissions. Each holder INCRs the shared counter after its admission and
 * DECRs it before its release, so the counter's span lies inside the slot's: the counter can exceed `max` only if
 * the store admitted more than `max` at once, and INCR's reply is the exact number of holders at that instant.
 */
async function lane(
  config: HammerConfig,
  limiter: Limiter,
  probe: Redis | Cluster,
  id: string,
  tally: HammerTally,
) {
  const counter = holdersKey(config.keyPrefix, limiter.scope, id);
  while (tally.admitted < config.admissions) {
    if (Date.now() > config.deadline)
      throw new Error(`${limiter.scope}/${id}: ${tally.admitted} admissions by the deadline`);
    const decision = await limiter.consume(id);
    if (decision.degraded !== undefined) {
      tally.degraded++;
      continue;
    }
    if (!decision.allowed) {
      tally.denied++;
      const retry = decision.retryAfterMs ?? -1;
      tally.minRetryMs = Math.min(tally.minRetryMs, retry);
      tally.maxRetryMs = Math.max(tally.maxRetryMs, retry);
      await sleep(1 + Math.random() * 2);
      continue;
    }
    tally.admitted++;
    tally.peak = Math.max(tally.peak, await probe.incr(counter));
    await sleep(1 + Math.random() * config.maxHoldMs);
    await probe.decr(counter);
    await decision.release?.();
  }
}

async function hammer(
  config: HammerConfig,
  store: RedisStore,
): Promise<Record<string, Record<string, HammerTally>>> {
  const probe = rawClient(config.target);
  try {
    const out: Record<string, Record<string, HammerTally>> = {};
    const lanes: Promise<void>[] = [];
    for (const spec of config.cases) {
      const limiter = limiterFor(spec, config.max, config.leaseMs, store);
      const tallies: Record<string, HammerTally> = {};
      out[spec.scope] = tallies;
      for (const id of spec.ids) {
        const tally = emptyTally();
        tallies[id] = tally;
        for (let i = 0; i < config.lanes; i++) lanes.push(lane(config, limiter, probe, id, tally));
      }
    }
    await Promise.all(lanes);
    return out;
  } finally {
    probe.disconnect();
  }
}

/** Takes every slot of each identifier, one after another, and reports the store's clock at each. */
async function hold(config: HoldConfig, store: RedisStore): Promise<Held> {
  const held: Held = Object.fromEntries(
    config.cases.map((spec) => [spec.scope, Object.fromEntries(spec.ids.map((id) => [id, [] as number[]]))]),
  );
  const limiters = config.cases.map((spec) => limiterFor(spec, config.max, config.leaseMs, store));
  for (let slot = 0; slot < config.max; slot++) {
    if (slot > 0) await sleep(config.gapMs);
    for (const [i, spec] of config.cases.entries()) {
      for (const id of spec.ids) {
        const decision = await (limiters[i] as Limiter).consume(id);
        if (!decision.allowed || decision.degraded !== undefined)
          throw new Error(`${spec.scope}/${id}: slot ${slot} refused (${decision.degraded ?? 'denied'})`);
        held[spec.scope]?.[id]?.push(decision.nowMs);
      }
    }
  }
  return held;
}

/** stdin's first line; the parent sends one once every worker is connected, so the floods overlap. */
function startSignal(): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdin.setEncoding('utf8');
    process.stdin.once('data', () => resolve());
    // A parent that died before the start signal must not leave this process waiting forever.
    process.stdin.once('end', () => reject(new Error('stdin closed before the start signal')));
  });
}

async function main(config: LimitWorkerConfig): Promise<void> {
  const plant = config.mode === 'hammer' ? config.plant : undefined;
  const { store, close } = await openLimitStore(
    config.target,
    config.keyPrefix,
    plant === undefined ? {} : { plant },
  );
  if (config.mode === 'hold') {
    process.stdout.write(`${JSON.stringify(await hold(config, store))}\n`);
    // Holding on until killed; a parent gone without killing it closes stdin, and then nothing is released either.
    process.stdin.once('end', () => process.exit(0)).resume();
    return;
  }
  process.stdout.write('ready\n');
  await startSignal();
  process.stdin.destroy();
  const tallies = await hammer(config, store);
  await close();
  process.stdout.write(`${JSON.stringify(tallies)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(JSON.parse(process.argv[2] ?? '') as LimitWorkerConfig);
}
