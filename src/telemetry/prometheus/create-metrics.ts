// Prometheus metrics for Tollgate's decisions, registered into a prom-client registry the application owns.
import type { Registry } from 'prom-client';
import { configError } from '../../core/errors.js';
import { optionalPeer } from '../../core/optional-peer.js';
import { decisionOutcome, isNearLimit } from '../../decision/outcome.js';
import type { DecisionEvent } from '../../gate/options.js';
import type { StoreStats } from '../../stores/store.js';
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
  type StoreInstrument,
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
  for (const instrument of stores.instruments) storeMetric(client, described(instrument), instrument, stores);

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

/**
 * A store figure as a metric set afresh from the stores' stats at each scrape: a counter too, since the store keeps
 * the running total (it only grows, as a counter must).
 */
function storeMetric(
  { Counter, Gauge }: PromClient,
  described: { name: string; help: string; registers: Registry[] },
  instrument: StoreInstrument,
  stores: ObservedStores,
): void {
  const labelNames = instrument.label === undefined ? [] : [instrument.label];
  if (instrument.kind === 'gauge') {
    new Gauge({
      ...described,
      labelNames,
      collect() {
        this.reset();
        for (const series of instrument.series(stores.read()))
          this.set(labelsOf(instrument, series), series.value);
      },
    });
    return;
  }
  new Counter({
    ...described,
    labelNames,
    collect() {
      this.reset();
      for (const series of instrument.series(stores.read()))
        this.inc(labelsOf(instrument, series), series.value);
    },
  });
}
