// What adaptive concurrency limits report to both exporters, described once: each instrument, and its series read
// from the limits' `stats()` when metrics are collected (nothing per request).
import type { AdaptiveStats } from '../adaptive/adaptive-concurrency.js';
import { configError } from '../core/errors.js';
import type { Instrument } from './observability.js';

/** One series: its labels (Prometheus) or attributes (OpenTelemetry), and its value. */
export interface LabelledSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

interface AdaptiveInstrument extends Instrument {
  readonly kind: 'counter' | 'gauge';
  /** Every label its series may carry: `limiter` is the limit's name; the unnamed partition has no `partition`. */
  readonly labelNames: readonly ('limiter' | 'partition' | 'kind')[];
  series(stats: readonly AdaptiveStats[]): LabelledSeries[];
}

type PartitionStats = AdaptiveStats['partitions'][number];

function perLimit(value: (stats: AdaptiveStats) => number): AdaptiveInstrument['series'] {
  return (all) => all.map((stats) => ({ labels: { limiter: stats.name }, value: value(stats) }));
}

/** Requests of no partition carry no `partition` label, as a single node's breaker carries no `node`. */
function perPartition(value: (partition: PartitionStats) => number): AdaptiveInstrument['series'] {
  return (all) =>
    all.flatMap(({ name: limiter, partitions }) =>
      partitions.map((partition) => ({
        labels: partition.name === '' ? { limiter } : { limiter, partition: partition.name },
        value: value(partition),
      })),
    );
}

const PARTITIONED = ['limiter', 'partition'] as const;

const ADAPTIVE_INSTRUMENTS: readonly AdaptiveInstrument[] = [
  {
    words: ['adaptive', 'limit'],
    kind: 'gauge',
    unit: '{request}',
    help: "An adaptive concurrency limit's current limit: the requests it lets be in flight at once, as its algorithm last set it.",
    labelNames: ['limiter'],
    series: perLimit(({ limit }) => limit),
  },
  {
    words: ['adaptive', 'in_flight'],
    kind: 'gauge',
    unit: '{request}',
    help: "Requests holding a slot of an adaptive limit now, by partition (none for requests of no partition): summed, the limit's own.",
    labelNames: PARTITIONED,
    series: perPartition(({ inFlight }) => inFlight),
  },
  {
    words: ['adaptive', 'rtt'],
    kind: 'gauge',
    unit: 's',
    help: "An adaptive limit's round-trip figures by kind, as its algorithm keeps them: noLoad (vegas), short and long (gradient2), minimum and sampled (gradient); none for aimd, nor before the first measured request.",
    labelNames: ['limiter', 'kind'],
    series: (all) =>
      all.flatMap(({ name: limiter, rtt }) =>
        Object.entries(rtt).map(([kind, ms]) => ({ labels: { limiter, kind }, value: ms / 1000 })),
      ),
  },
  {
    words: ['adaptive', 'completed'],
    kind: 'counter',
    unit: '{request}',
    help: 'Requests that held a slot of an adaptive limit to their release, by partition; a slot given back unused (the store denied, the request never ran) is not counted.',
    labelNames: PARTITIONED,
    series: perPartition(({ completed }) => completed),
  },
  {
    words: ['adaptive', 'rejections'],
    kind: 'counter',
    unit: '{request}',
    help: 'Requests an adaptive limit denied a slot at once (it was full, or others were waiting first), by partition.',
    labelNames: PARTITIONED,
    series: perPartition(({ rejected }) => rejected),
  },
  {
    words: ['adaptive', 'drops'],
    kind: 'counter',
    unit: '{request}',
    help: 'Requests released as dropped (timed out, or answered with a sign of overload), by partition: what the algorithm backs off from.',
    labelNames: PARTITIONED,
    series: perPartition(({ dropped }) => dropped),
  },
];

export interface ObservedAdaptive {
  /** The adaptive instruments, or none when no limit is observed. */
  readonly instruments: readonly AdaptiveInstrument[];
  /** Every limit's figures now. */
  read(): AdaptiveStats[];
}

/** The `adaptive` option, checked at wire-up: adaptive limits (`adaptiveConcurrency()`), each of its own name. */
export function observeAdaptive(limits: unknown): ObservedAdaptive {
  if (limits === undefined) return { instruments: [], read: () => [] };
  if (!Array.isArray(limits) || !limits.every((limit) => typeof limit?.stats === 'function'))
    throw configError(
      'adaptive',
      'must be an array of adaptive limits with a stats() method (adaptiveConcurrency())',
      limits,
    );
  const observed = [...limits] as { stats(): AdaptiveStats }[];
  const names = new Set<string>();
  for (const { name } of observed.map((limit) => limit.stats())) {
    // Two limits of one name would share their series, each overwriting the other's.
    if (names.has(name))
      throw configError('adaptive', `must hold each limit once, each of its own \`name\` ("${name}" twice)`);
    names.add(name);
  }
  return { instruments: ADAPTIVE_INSTRUMENTS, read: () => observed.map((limit) => limit.stats()) };
}
