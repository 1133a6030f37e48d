// Prometheus metrics for Tollgate's decisions, stores and adaptive limits, in the application's prom-client registry.
import type { Registry } from 'prom-client';
import type { AdaptiveStats } from '../../adaptive/adaptive-concurrency.js';
import { configError } from '../../core/errors.js';
import { optionalPeer } from '../../core/optional-peer.js';
import { decisionOutcome, isNearLimit } from '../../decision/outcome.js';
import type { DecisionEvent } from '../../gate/options.js';
import type { StoreStats } from '../../stores/store.js';
import { type LabelledSeries, type ObservedAdaptive, observeAdaptive } from '../adaptive-instruments.js';
import {
  DECISION_DURATION,
  DECISIONS,
  DURATION_BUCKETS,
  type Instrument,
  labelsOf,
  NEAR_LIMIT,
  type ObservedStores,
  observeStores,
  prometheusName,
  STORE_UP,
  seriesByScope,
  storeUpReading,
} from '../observability.js';

export interface MetricsOptions {
  /** Where the metrics are registered. Default: a new registry (pass prom-client's `register` for the global one). */
  readonly registry?: Registry;
  /** Prefix of every metric name. Default 'tollgate_'. */
  readonly prefix?: string;
  /** Read at each scrape for the store health gauge; true when the store answers. Without it the gauge is 1. */
  readonly storeHealth?: () => boolean | Promise<boolean>;
  /** Stores whose own figures (timeouts, errors, breakers, batches...) are read at each scrape: `store.stats()`. */
  readonly stores?: readonly { stats(): StoreStats }[];
  /**
   * Adaptive concurrency limits (the `adaptiveConcurrency()` objects given to `createLimiter`), read at each scrape
   * (`limit.stats()`): `tollgate_adaptive_limit`, `_in_flight` and `_rtt_seconds` (by `kind`) gauges, and
   * `_completed_total`, `_rejections_total` and `_drops_total`. Each series is labelled `limiter` by the limit's
   * `name` (so each needs its own), and `partition` by partition, none for requests of no partition.
   */
  readonly adaptive?: readonly { stats(): AdaptiveStats }[];
}

/** Decisions at a glance (total, allowed, blocked): a shadow decision was let through, so it counts as allowed. */
export interface DecisionTotals {
  readonly total: number;
  readonly allowed: number;
  readonly blocked: number;
}

export interface TollgateMetrics {
  readonly registry: Registry;
  /** Give it to the gate as `onDecision` (or call it from your own). Costs a counter and a histogram update, and one counter more near the limit. */
  readonly onDecision: (event: DecisionEvent) => void;
  /** The totals, overall and per scope, from the same counters Prometheus reads. */
  totals(): Promise<DecisionTotals & { readonly scopes: Record<string, DecisionTotals> }>;
}

type PromClient = typeof import('prom-client');

/** The outcomes that turned a request away (a shadow denial went through). */
const DENIALS = new Set<string>(['denied', 'locked-out', 'degraded-denied']);

export function createMetrics(options: MetricsOptions = {}): TollgateMetrics {
  const client = optionalPeer<PromClient>('prom-client', 'createMetrics');
  const { Counter, Gauge, Histogram, Registry } = client;
  const registry = options.registry ?? new Registry();
  if (!(registry instanceof Registry)) throw configError('registry', 'must be a prom-client Registry');
  const prefix = options.prefix ?? 'tollgate_';
  if (typeof prefix !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$|^$/.test(prefix))
    throw configError('prefix', 'must be a valid Prometheus metric name prefix', prefix);
  const storeUp = storeUpReading(options.storeHealth);
  const stores = observeStores(options.stores);
  const adaptive = observeAdaptive(options.adaptive);
  const registers = [registry];
  const described = (instrument: Instrument) => ({
    name: prometheusName(prefix, instrument),
    help: instrument.help,
    registers,
  });

  const decisions = new Counter({ ...described(DECISIONS), labelNames: ['scope', 'outcome'] as const });
  const duration = new Histogram({
    ...described(DECISION_DURATION),
    labelNames: ['scope'] as const,
    buckets: [...DURATION_BUCKETS],
  });
  const nearLimit = new Counter({ ...described(NEAR_LIMIT), labelNames: ['scope'] as const });
  new Gauge({
    ...described(STORE_UP),
    async collect() {
      this.set(await storeUp());
    },
  });
  collectedMetrics(client, described, stores, adaptive);

  // Label lookups are made once per scope and outcome: prom-client would otherwise hash the label set on every decision.
  const seriesOf = seriesByScope(
    (scope) => ({ duration: duration.labels(scope), nearLimit: nearLimit.labels(scope) }),
    (scope, outcome) => decisions.labels(scope, outcome),
  );

  const onDecision = ({ scope, decision, latencyMs, shadow }: DecisionEvent) => {
    const series = seriesOf(scope);
    series.outcome(decisionOutcome(decision, shadow)).inc();
    series.scoped.duration.observe(latencyMs / 1000);
    if (isNearLimit(decision)) series.scoped.nearLimit.inc();
  };

  const totals = async () => {
    const overall = { total: 0, allowed: 0, blocked: 0 };
    const scopes: Record<string, { total: number; allowed: number; blocked: number }> = {};
    for (const { labels, value } of (await decisions.get()).values) {
      const scope = String(labels.scope);
      scopes[scope] ??= { total: 0, allowed: 0, blocked: 0 };
      const perScope = scopes[scope];
      const field = DENIALS.has(String(labels.outcome)) ? 'blocked' : 'allowed';
      for (const sum of [overall, perScope]) {
        sum.total += value;
        sum[field] += value;
      }
    }
    return { ...overall, scopes };
  };

  return { registry, onDecision, totals };
}

type Described = (instrument: Instrument) => { name: string; help: string; registers: Registry[] };

/** The figures read at each scrape: the stores' and the adaptive limits'. */
function collectedMetrics(
  client: PromClient,
  described: Described,
  stores: ObservedStores,
  adaptive: ObservedAdaptive,
): void {
  for (const instrument of stores.instruments) {
    const labelNames = instrument.label === undefined ? [] : [instrument.label];
    collected(client, described(instrument), instrument.kind, labelNames, () =>
      instrument.series(stores.read()).map((series) => ({
        labels: labelsOf(instrument, series),
        value: series.value,
      })),
    );
  }
  for (const instrument of adaptive.instruments)
    collected(client, described(instrument), instrument.kind, instrument.labelNames, () =>
      instrument.series(adaptive.read()),
    );
}

/**
 * A figure read at each scrape, its series set afresh: a counter too, since what it reads (a store, an adaptive
 * limit) keeps the running total, which only grows, as a counter must.
 */
function collected(
  { Counter, Gauge }: PromClient,
  described: ReturnType<Described>,
  kind: 'counter' | 'gauge',
  labelNames: readonly string[],
  read: () => LabelledSeries[],
): void {
  if (kind === 'gauge') {
    new Gauge({
      ...described,
      labelNames,
      collect() {
        this.reset();
        for (const { labels, value } of read()) this.set(labels, value);
      },
    });
    return;
  }
  new Counter({
    ...described,
    labelNames,
    collect() {
      this.reset();
      for (const { labels, value } of read()) this.inc(labels, value);
    },
  });
}
