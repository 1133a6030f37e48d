// What Tollgate's exporters report, described once (each instrument's name, kind, unit and help, and the store figures
// read when metrics are collected), so that tollgate/metrics (Prometheus) and tollgate/otel tell the same story.

import { configError } from '../core/errors.js';
import { optionalFunction } from '../core/validate.js';
import type { DecisionOutcome } from '../decision/outcome.js';
import type { StoreStats } from '../stores/store.js';

export interface Instrument {
  /** The name's words: joined by `_` for Prometheus (with the unit's and a counter's suffix), by `.` for OpenTelemetry. */
  readonly words: readonly string[];
  readonly kind: 'counter' | 'gauge' | 'histogram';
  /** As OpenTelemetry takes it (`{...}` counts things, `s` is seconds and Prometheus' `_seconds`); '' for none. */
  readonly unit: string;
  readonly help: string;
}

export const DECISIONS: Instrument = {
  words: ['decisions'],
  kind: 'counter',
  unit: '{decision}',
  help: 'Rate-limit decisions by scope and outcome (allowed, denied, locked-out, degraded-allowed, degraded-denied, shadow).',
};

export const DECISION_DURATION: Instrument = {
  words: ['decision', 'duration'],
  kind: 'histogram',
  unit: 's',
  help: "Time a limiter took to decide, the store's round trip included.",
};

export const NEAR_LIMIT: Instrument = {
  words: ['near_limit'],
  kind: 'counter',
  unit: '{decision}',
  help: 'Allowed decisions that left under 20% of the limit: clients close to being denied.',
};

export const STORE_UP: Instrument = {
  words: ['store', 'up'],
  kind: 'gauge',
  unit: '',
  help: 'Whether the store answers (1) or not (0), checked at each collection.',
};

/** Seconds: an in-process decision takes microseconds, a Redis round trip about a millisecond. */
export const DURATION_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

export function prometheusName(prefix: string, { words, kind, unit }: Instrument): string {
  return `${prefix}${words.join('_')}${unit === 's' ? '_seconds' : ''}${kind === 'counter' ? '_total' : ''}`;
}

/** OpenTelemetry's Prometheus exporter turns it back into `prometheusName`'s (dots to `_`, unit and `_total` added). */
export function otelName(prefix: string, { words }: Instrument): string {
  return prefix + words.join('.');
}

/** One series of a store instrument: its value, and its label's value when it has one. */
export interface Series {
  readonly value: number;
  readonly label?: string;
}

export interface StoreInstrument extends Instrument {
  readonly kind: 'counter' | 'gauge';
  /** The figure it exports: it exists only when some store reports it. */
  readonly stat: keyof StoreStats;
  /** What its series are told apart by. */
  readonly label?: 'kind' | 'node' | 'state';
  /** Its series over every store: counts summed, a node's breaker open when any store's is. */
  series(stats: readonly StoreStats[]): Series[];
}

type Count = 'timeouts' | 'breakerTrips' | 'scriptReloads' | 'batches' | 'batchedDecisions' | 'denyCacheHits';

function count(stat: Count, words: readonly string[], unit: string, help: string): StoreInstrument {
  const series = (stats: readonly StoreStats[]) => [
    { value: stats.reduce((sum, figures) => sum + (figures[stat] ?? 0), 0) },
  ];
  return { words, kind: 'counter', unit, help, stat, series };
}

/** Store figures, read from each store's `stats()` when metrics are collected: nothing per decision. */
const STORE_INSTRUMENTS: readonly StoreInstrument[] = [
  count(
    'timeouts',
    ['store', 'timeouts'],
    '{call}',
    'Calls to the store that did not answer within their time budget (decisions, probes, resets, connecting).',
  ),
  {
    words: ['store', 'errors'],
    kind: 'counter',
    unit: '{call}',
    help: 'Failed calls of decisions by kind: timeout, connection (no answer at all), reply (Redis refused a command: OOM, READONLY, MISCONF, CLUSTERDOWN, WRONGTYPE), script (the script failed, or its reply could not be read).',
    stat: 'errors',
    label: 'kind',
    series: (stats) => summedBy(stats.map(({ errors }) => errors)),
  },
  {
    words: ['store', 'breaker', 'state'],
    kind: 'gauge',
    unit: '',
    help: "1 while a store node's circuit breaker is open (its decisions answered without it), else 0; no node label for a single node.",
    stat: 'breakers',
    label: 'node',
    series: (stats) => {
      const open = new Map<string, boolean>();
      for (const { breakers } of stats)
        for (const breaker of breakers ?? [])
          open.set(breaker.node, open.get(breaker.node) === true || breaker.open);
      return [...open].map(([node, isOpen]) => ({
        value: isOpen ? 1 : 0,
        ...(node === '' ? {} : { label: node }),
      }));
    },
  },
  count(
    'breakerTrips',
    ['store', 'breaker', 'trips'],
    '{trip}',
    'Times a circuit breaker of the store opened.',
  ),
  count(
    'scriptReloads',
    ['store', 'script', 'reloads'],
    '{reload}',
    "Times a server lacked the store's engine (a fresh server, a restart, FUNCTION FLUSH) and it was loaded again.",
  ),
  count(
    'batches',
    ['store', 'batches'],
    '{call}',
    'Script calls of decisions sent to the store: batched decisions over batches is the mean batch size.',
  ),
  count(
    'batchedDecisions',
    ['store', 'batched_decisions'],
    '{decision}',
    "Decisions the store's script calls carried.",
  ),
  count(
    'denyCacheHits',
    ['deny_cache', 'hits'],
    '{decision}',
    'Denials the local deny cache answered without the store.',
  ),
  {
    words: ['store', 'evictions'],
    kind: 'counter',
    unit: '{bucket}',
    help: 'Buckets dropped to stay within the store size bound, by state: at-rest (held nothing: no loss), live (quota still owed, handed back early), held (a concurrency lease, a lockout block or a booked wait, broken).',
    stat: 'evictions',
    label: 'state',
    // A count alone (a store written before evictions were told apart) is of live state, as it always meant.
    series: (stats) =>
      summedBy(
        stats.map(({ evictions }) => (typeof evictions === 'number' ? { live: evictions } : evictions)),
      ),
  },
];

/** One series per label value, each the sum over the stores that report it. */
function summedBy(records: readonly (Readonly<Record<string, number>> | undefined)[]): Series[] {
  const sums = new Map<string, number>();
  for (const record of records)
    for (const [label, value] of Object.entries(record ?? {}))
      sums.set(label, (sums.get(label) ?? 0) + value);
  return [...sums].map(([label, value]) => ({ label, value }));
}

/** A series' labels (Prometheus) or attributes (OpenTelemetry): none for an unlabelled one. */
export function labelsOf({ label: name }: StoreInstrument, { label }: Series): Record<string, string> {
  return name === undefined || label === undefined ? {} : { [name]: label };
}

export interface ObservedStores {
  /** The instruments for the figures these stores report, chosen once at wire-up. */
  readonly instruments: readonly StoreInstrument[];
  /** Every store's figures now. */
  read(): StoreStats[];
}

/** The `stores` option, checked at wire-up: stores that report `stats()` (MemoryStore, RedisStore). */
export function observeStores(stores: unknown): ObservedStores {
  if (stores === undefined) return { instruments: [], read: () => [] };
  if (!Array.isArray(stores) || !stores.every((store) => typeof store?.stats === 'function'))
    throw configError(
      'stores',
      'must be an array of stores with a stats() method (MemoryStore, RedisStore)',
      stores,
    );
  const observed = [...stores] as { stats(): StoreStats }[];
  const read = () => observed.map((store) => store.stats());
  const reported = read();
  const instruments = STORE_INSTRUMENTS.filter(({ stat }) =>
    reported.some((stats) => stats[stat] !== undefined),
  );
  return { instruments, read };
}

/**
 * The `storeHealth` option, checked at wire-up, as the gauge's reading: 1 when the store answers (or without a
 * check), 0 when it does not or the check throws.
 */
export function storeUpReading(storeHealth: unknown): () => Promise<number> {
  const check = optionalFunction(
    'storeHealth',
    storeHealth as (() => boolean | Promise<boolean>) | undefined,
  );
  if (check === undefined) return () => Promise.resolve(1);
  return async () => {
    try {
      return (await check()) ? 1 : 0;
    } catch {
      return 0;
    }
  };
}

/** What one scope's decisions are recorded in, and each outcome's within it. */
export interface ScopeSeries<S, O> {
  readonly scoped: S;
  outcome(outcome: DecisionOutcome): O;
}

/**
 * Series (prom-client's labelled children, OpenTelemetry's attribute sets) made on a scope's or an outcome's first
 * decision rather than on each: a label set hashed or an object made per decision is the exporters' main cost.
 */
export function seriesByScope<S, O>(
  ofScope: (scope: string) => S,
  ofOutcome: (scope: string, outcome: DecisionOutcome) => O,
): (scope: string) => ScopeSeries<S, O> {
  const scopes = new Map<string, ScopeSeries<S, O>>();
  return (scope) => {
    let found = scopes.get(scope);
    if (found === undefined) {
      const outcomes = new Map<DecisionOutcome, O>();
      found = {
        scoped: ofScope(scope),
        outcome: (outcome) => {
          let series = outcomes.get(outcome);
          if (series === undefined) {
            series = ofOutcome(scope, outcome);
            outcomes.set(outcome, series);
          }
          return series;
        },
      };
      scopes.set(scope, found);
    }
    return found;
  };
}
