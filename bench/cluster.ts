// Section 8: Redis Cluster: decisions per second, server time and decisions per engine call, beside rate-limiter-flexible.
import {
  type ClientLibrary,
  type Contender,
  flexibleRedis,
  label,
  type Opened,
  type Quota,
  tollgateRedis,
} from './contenders.js';
import { KEYS, medianLoad, peerOf } from './direct.js';
import { keySequence } from './keys.js';
import { closedLoop, inRotation, type LoadResult, touchEveryKey } from './load.js';
import { type DecisionCommands, serverRun } from './redis.js';
import { type BenchCluster, startBenchCluster } from './redis-cluster.js';
import { count, fixed, median, ratio, type Table } from './table.js';

export interface ClusterSettings {
  readonly rounds: number;
  readonly ms: number;
  readonly warmupMs: number;
}

const CLUSTER_IN_FLIGHT = [1, 64] as const;
export const CLUSTER_CLIENTS: readonly ClientLibrary[] = ['ioredis', 'node-redis'];
const MASTERS = 3;
/** As in section 1: never reached, so every call of every contender is a full read-decide-write. */
const QUOTA: Quota = { limit: 1_000_000, windowMs: 3_600_000 };

/** One contender at one in-flight count, medians over the rounds. */
interface ClusterRun {
  readonly load: LoadResult;
  /** `INFO commandstats` usec of the engine calls (FCALL, EVALSHA, EVAL) on every master, per decision. */
  readonly serverUs: number;
  /** Decisions over the engine calls counted on every master. */
  readonly perEngineCall: number;
  /** Tollgate only: its store's own count, `batchedDecisions` over `batches`. */
  readonly perBatch?: number;
  /** Decisions answered in the fail mode, over all rounds: each one cost Redis nothing and skews the row. */
  readonly degraded: number;
}

export interface ClusterMeasure {
  readonly contender: Contender;
  readonly label: string;
  readonly runs: Record<number, ClusterRun>;
}

export interface ClusterResults {
  readonly redisVersion: string;
  readonly measures: readonly ClusterMeasure[];
}

interface Sample extends DecisionCommands {
  readonly load: LoadResult;
  readonly batches: number;
  readonly batchedDecisions: number;
  readonly degraded: number;
}

function clusterContenders(cluster: BenchCluster): Contender[] {
  return [
    ...CLUSTER_CLIENTS.map((client) => tollgateRedis(cluster, client, 'token-bucket', QUOTA)),
    tollgateRedis(cluster, 'ioredis', 'token-bucket', QUOTA, {
      name: 'own connection',
      options: { rootNodes: cluster.rootNodes },
    }),
    ...CLUSTER_CLIENTS.map((client) => flexibleRedis(cluster, client, QUOTA)),
  ];
}

/** One measured run, with the store's own counters read around it. */
async function sample(
  cluster: BenchCluster,
  decider: Opened,
  keys: readonly string[],
  inFlight: number,
  ms: number,
): Promise<Sample> {
  const counters = () => ({
    batches: decider.metrics?.batches ?? 0,
    batchedDecisions: decider.metrics?.batchedDecisions ?? 0,
    degraded: (decider.metrics?.degradedAllowed ?? 0) + (decider.metrics?.degradedDenied ?? 0),
  });
  const before = counters();
  const run = await serverRun(cluster, decider, keys, inFlight, ms);
  const after = counters();
  return {
    ...run,
    batches: after.batches - before.batches,
    batchedDecisions: after.batchedDecisions - before.batchedDecisions,
    degraded: after.degraded - before.degraded,
  };
}

function summarize(samples: readonly Sample[], tollgate: boolean): ClusterRun {
  const of = (pick: (s: Sample) => number) => median(samples.map(pick));
  return {
    load: medianLoad(samples.map((s) => s.load)),
    serverUs: of((s) => s.scriptUsec / s.load.decisions),
    perEngineCall: of((s) => s.load.decisions / s.scriptCalls),
    ...(tollgate ? { perBatch: of((s) => s.batchedDecisions / s.batches) } : {}),
    degraded: samples.reduce((sum, s) => sum + s.degraded, 0),
  };
}

export async function runCluster(settings: ClusterSettings): Promise<ClusterResults> {
  const cluster = await startBenchCluster(MASTERS);
  try {
    // IPv4-style identifiers: their keys hash to slots all over the key space, so every master owns about a third.
    const keys = keySequence(KEYS, 65_536);
    const distinct = [...new Set(keys)];
    const contenders = clusterContenders(cluster);
    const opened = new Map<Contender, Opened>();
    for (const contender of contenders) opened.set(contender, await contender.open());
    for (const decider of opened.values()) {
      // Every key written once and the engine loaded on every master, so no measured run pays for either.
      await touchEveryKey(decider, distinct);
      await closedLoop(decider, keys, 64, settings.warmupMs);
    }
    const units = contenders.flatMap((contender) =>
      CLUSTER_IN_FLIGHT.map((inFlight) => ({ contender, inFlight })),
    );
    const samples = new Map(units.map((unit) => [unit, [] as Sample[]]));
    await inRotation(units, settings.rounds, async (unit) => {
      const decider = opened.get(unit.contender) as Opened;
      samples.get(unit)?.push(await sample(cluster, decider, keys, unit.inFlight, settings.ms));
    });
    for (const decider of opened.values()) await decider.close();
    const measures = contenders.map((contender) => {
      const runs: Record<number, ClusterRun> = {};
      for (const unit of units) {
        if (unit.contender !== contender) continue;
        runs[unit.inFlight] = summarize(samples.get(unit) ?? [], contender.library === 'Tollgate');
      }
      return { contender, label: label(contender), runs };
    });
    return { redisVersion: cluster.version, measures };
  } finally {
    await cluster.stop();
  }
}

function clusterRow(measures: readonly ClusterMeasure[], m: ClusterMeasure, inFlight: number): string[] {
  const run = m.runs[inFlight];
  const peer = peerOf(measures, m.contender, 'rate-limiter-flexible')?.runs[inFlight];
  return [
    m.contender.client ?? '-',
    m.label,
    String(inFlight),
    count(run?.load.perSecond ?? Number.NaN),
    fixed(run?.load.p50Us),
    fixed(run?.load.p99Us),
    fixed(run?.serverUs, 2),
    fixed(run?.perEngineCall, 2),
    run?.perBatch === undefined ? '-' : fixed(run.perBatch, 2),
    ratio((run?.load.perSecond ?? Number.NaN) / (peer?.load.perSecond ?? Number.NaN)),
    ratio((run?.serverUs ?? Number.NaN) / (peer?.serverUs ?? Number.NaN)),
  ];
}

export function clusterTable({ redisVersion, measures }: ClusterResults, settings: ClusterSettings): Table {
  const degraded = measures.flatMap((m) =>
    CLUSTER_IN_FLIGHT.filter((n) => (m.runs[n]?.degraded ?? 0) > 0).map(
      (n) => `${m.label} (${m.contender.client}, ${n} in flight): ${count(m.runs[n]?.degraded ?? 0)}`,
    ),
  );
  return {
    title: `8. Redis Cluster, ${MASTERS} masters: token bucket beside rate-limiter-flexible, ${count(KEYS)} random keys`,
    columns: [
      'client',
      'contender',
      'in flight',
      'dec/s',
      'p50 µs',
      'p99 µs',
      'server µs per decision',
      'decisions per engine call',
      'per store batch',
      'dec/s vs rate-limiter-flexible',
      'server µs vs rate-limiter-flexible',
    ],
    rows: measures.flatMap((m) => CLUSTER_IN_FLIGHT.map((n) => clusterRow(measures, m, n))),
    notes: [
      `The bench's own cluster of ${MASTERS} masters on loopback (redis-server ${redisVersion}, no replicas). Each client`,
      'library\'s cluster client is shared by its contenders ("own connection": the store opens its own from',
      '`rootNodes`). Server time and engine calls are `INFO commandstats` summed over every master, reset before each',
      'run: FCALL for Tollgate, EVALSHA and EVAL for rate-limiter-flexible (a fixed-window counter). "Per store batch"',
      "is Tollgate's own count of the decisions each engine call carried. Ratios are to rate-limiter-flexible on the",
      `same client at the same in-flight count. Medians of ${settings.rounds} interleaved runs of ${settings.ms / 1000} s each.`,
      ...(degraded.length === 0
        ? []
        : ['Decisions answered in the fail mode, which cost Redis nothing:', ...degraded]),
    ],
  };
}
