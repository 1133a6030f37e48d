// The performance targets, each a ratio or a bound taken from this run's own figures.
import { CLUSTER_CLIENTS, type ClusterMeasure } from './cluster.js';
import { type DirectMeasure, peerOf } from './direct.js';
import type { FloodMeasure } from './flood.js';
import { type HttpMeasure, NO_LIMITER, TOLLGATE_MEMORY } from './http.js';
import type { MemoryMeasure } from './memory.js';
import { EXPRESS, GRPC, type ServiceMeasure } from './service.js';
import { fixed, type Table } from './table.js';

export interface Target {
  readonly name: string;
  readonly measured: number;
  readonly bound: number;
  /** 'min': measured must be at least the bound; 'max': at most. */
  readonly kind: 'min' | 'max';
  readonly unit: string;
  readonly met: boolean;
}

export interface Results {
  readonly direct: readonly DirectMeasure[];
  readonly http: readonly HttpMeasure[];
  readonly flood: readonly FloodMeasure[];
  readonly memory: readonly MemoryMeasure[];
}

function target(name: string, measured: number, kind: 'min' | 'max', bound: number, unit: string): Target {
  const met = kind === 'min' ? measured >= bound : measured <= bound;
  return { name, measured, bound, kind, unit, met };
}

export function evaluateTargets({ direct, http, flood, memory }: Results, heapKeys: number): Target[] {
  const tollgate = (engine: string, policy: string) =>
    direct.find(
      (m) =>
        m.contender.library === 'Tollgate' &&
        m.contender.engine === engine &&
        m.contender.policy === policy &&
        (engine === 'memory' || m.contender.client === 'ioredis'),
    ) as DirectMeasure;
  const rate = (m: DirectMeasure | undefined) => m?.load[64]?.perSecond ?? Number.NaN;
  const redisBucket = tollgate('redis', 'token-bucket');
  const redisWindow = tollgate('redis', 'fixed-window');
  const memoryBucket = tollgate('memory', 'token-bucket');
  const flexibleScript =
    peerOf(direct, redisBucket.contender, 'rate-limiter-flexible')?.serverUs ?? Number.NaN;
  const byName = (name: string) => http.find((m) => m.name === name)?.rps ?? Number.NaN;
  const tollgateFlood = flood.find(
    (m) => m.contender.library === 'Tollgate' && m.contender.variant === undefined,
  );
  const memoryRow = memory.find((m) => m.library === 'Tollgate' && m.policy === 'token-bucket');
  return [
    target(
      'RedisStore dec/s at 64 in flight, token bucket, vs rate-limiter-flexible (ioredis)',
      rate(redisBucket) / rate(peerOf(direct, redisBucket.contender, 'rate-limiter-flexible')),
      'min',
      1.25,
      'x',
    ),
    target(
      'RedisStore dec/s at 64 in flight, token bucket, vs rate-limit-redis (ioredis)',
      rate(redisBucket) / rate(peerOf(direct, redisBucket.contender, 'rate-limit-redis')),
      'min',
      1.4,
      'x',
    ),
    target(
      "Redis server time, token bucket, vs rate-limiter-flexible's fixed-window script",
      (redisBucket.serverUs ?? Number.NaN) / flexibleScript,
      'max',
      0.8,
      'x',
    ),
    target(
      "Redis server time, fixed window, vs rate-limiter-flexible's fixed-window script",
      (redisWindow.serverUs ?? Number.NaN) / flexibleScript,
      'max',
      0.7,
      'x',
    ),
    ...(['p50Us', 'p99Us'] as const).map((percentile) =>
      target(
        `RedisStore ${percentile.slice(0, 3)} at 1 in flight, token bucket, vs rate-limiter-flexible (ioredis)`,
        (redisBucket.load[1]?.[percentile] ?? Number.NaN) /
          (peerOf(direct, redisBucket.contender, 'rate-limiter-flexible')?.load[1]?.[percentile] ??
            Number.NaN),
        'max',
        1.1,
        'x',
      ),
    ),
    target(
      "MemoryStore dec/s at 64 in flight, token bucket, vs express-rate-limit's MemoryStore",
      rate(memoryBucket) / rate(peerOf(direct, memoryBucket.contender, 'express-rate-limit')),
      'min',
      1.25,
      'x',
    ),
    target(
      'MemoryStore dec/s at 64 in flight, token bucket, vs rate-limiter-flexible (memory)',
      rate(memoryBucket) / rate(peerOf(direct, memoryBucket.contender, 'rate-limiter-flexible')),
      'min',
      2,
      'x',
    ),
    target(
      'Express + Tollgate MemoryStore rps vs Express alone',
      byName(TOLLGATE_MEMORY) / byName(NO_LIMITER),
      'min',
      0.95,
      'x',
    ),
    target(
      'Flood: Redis commands per rejected request',
      tollgateFlood === undefined ? Number.NaN : tollgateFlood.commands / tollgateFlood.rejected,
      'max',
      0.01,
      '',
    ),
    target('Redis bytes per key, token bucket', memoryRow?.redisBytesPerKey ?? Number.NaN, 'max', 100, ' B'),
    target(
      `MemoryStore heap bytes per key at ${heapKeys.toLocaleString('en-US')} keys, token bucket`,
      memoryRow?.heapBytesPerKey[heapKeys] ?? Number.NaN,
      'max',
      100,
      ' B',
    ),
  ];
}

/** Tollgate's token bucket on each client's cluster, beside rate-limiter-flexible on the same client. */
export function evaluateClusterTargets(cluster: readonly ClusterMeasure[]): Target[] {
  return CLUSTER_CLIENTS.flatMap((client) => {
    const tollgate = cluster.find(
      (m) =>
        m.contender.library === 'Tollgate' &&
        m.contender.client === client &&
        m.contender.variant === undefined,
    );
    const flexible = tollgate && peerOf(cluster, tollgate.contender, 'rate-limiter-flexible');
    const of = (m: ClusterMeasure | undefined, inFlight: number, pick: 'perSecond' | 'serverUs') => {
      const run = m?.runs[inFlight];
      return (pick === 'perSecond' ? run?.load.perSecond : run?.serverUs) ?? Number.NaN;
    };
    const vs = (inFlight: number, pick: 'perSecond' | 'serverUs') =>
      of(tollgate, inFlight, pick) / of(flexible, inFlight, pick);
    const on = `(${client} cluster)`;
    return [
      target(
        `Cluster: RedisStore dec/s at 64 in flight vs rate-limiter-flexible ${on}`,
        vs(64, 'perSecond'),
        'min',
        2,
        'x',
      ),
      target(
        `Cluster: server time per decision at 64 in flight vs rate-limiter-flexible ${on}`,
        vs(64, 'serverUs'),
        'max',
        1,
        'x',
      ),
      target(
        `Cluster: server time of a lone decision (1 in flight) vs rate-limiter-flexible ${on}`,
        vs(1, 'serverUs'),
        'max',
        1,
        'x',
      ),
      target(
        `Cluster: decisions per engine call at 64 in flight ${on}`,
        tollgate?.runs[64]?.perEngineCall ?? Number.NaN,
        'min',
        8,
        ' per call',
      ),
    ];
  });
}

/** The service's targets: gRPC latency at 64 in flight, and its CPU per decision beside the Express adapter's. */
export function evaluateServiceTargets(service: readonly ServiceMeasure[]): Target[] {
  const at64 = (name: string) => service.find((m) => m.name === name && m.inFlight === 64);
  const grpc = at64(GRPC);
  if (grpc === undefined) return [];
  return [
    target('Service: gRPC p99 at 64 in flight, MemoryStore', grpc.p99Ms, 'max', 2, ' ms'),
    target(
      'Service: server CPU per gRPC decision vs per request through the Express adapter',
      grpc.cpuUs / (at64(EXPRESS)?.cpuUs ?? Number.NaN),
      'max',
      2,
      'x',
    ),
  ];
}

export function targetTable(targets: readonly Target[]): Table {
  const show = (n: number, unit: string) => `${fixed(n, unit === ' B' ? 1 : unit === '' ? 4 : 2)}${unit}`;
  return {
    title: 'Targets',
    columns: ['target', 'measured', 'required', 'result'],
    rows: targets.map((t) => [
      t.name,
      show(t.measured, t.unit),
      `${t.kind === 'min' ? '>=' : '<='} ${show(t.bound, t.unit)}`,
      t.met ? 'PASS' : 'MISS',
    ]),
  };
}
