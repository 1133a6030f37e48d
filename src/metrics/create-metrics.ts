// Prometheus metrics for Tollgate's decisions, registered into a prom-client registry the application owns.
import { createRequire } from 'node:module';
import type { Counter, Histogram, Registry } from 'prom-client';
import { decisionOutcome, isNearLimit } from '../decision-outcome.js';
import { configError, TollgateError } from '../errors.js';
import type { DecisionEvent } from '../gate-options.js';
import { optionalFunction } from '../validate.js';

export interface MetricsOptions {
  /** Where the metrics are registered. Default: a new registry (pass prom-client's `register` for the global one). */
  readonly registry?: Registry;
  /** Prefix of every metric name. Default 'tollgate_'. */
  readonly prefix?: string;
  /** Read at each scrape for the store health gauge; true when the store answers. Without it the gauge is 1. */
  readonly storeHealth?: () => boolean | Promise<boolean>;
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

/** Seconds: an in-process decision takes microseconds, a Redis round trip about a millisecond. */
const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

interface ScopeSeries {
  readonly decisions: Map<string, Counter.Internal>;
  readonly latency: Histogram.Internal<'scope'>;
  readonly nearLimit: Counter.Internal;
}

const require = createRequire(import.meta.url);

/**
 * prom-client, loaded when metrics are created rather than when this module is imported: it is an optional peer,
 * so `import 'tollgate/metrics'` works in any install and only `createMetrics` asks for the package.
 */
function promClient(): typeof import('prom-client') {
  try {
    return require('prom-client') as typeof import('prom-client');
  } catch (cause) {
    if ((cause as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw cause;
    throw new TollgateError(
      'ERR_TOLLGATE_CONFIG',
      'createMetrics needs the `prom-client` package (npm install prom-client)',
      { cause },
    );
  }
}

/** The outcomes that turned a request away (a shadow denial went through). */
const DENIALS = new Set<string>(['denied', 'locked-out', 'degraded-denied']);

export function createMetrics(options: MetricsOptions = {}): TollgateMetrics {
  const { Counter, Gauge, Histogram, Registry } = promClient();
  const registry = options.registry ?? new Registry();
  if (!(registry instanceof Registry)) throw configError('registry', 'must be a prom-client Registry');
  const prefix = options.prefix ?? 'tollgate_';
  if (typeof prefix !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$|^$/.test(prefix))
    throw configError('prefix', 'must be a valid Prometheus metric name prefix', prefix);
  const storeHealth = optionalFunction('storeHealth', options.storeHealth);
  const registers = [registry];

  const decisions = new Counter({
    name: `${prefix}decisions_total`,
    help: 'Rate-limit decisions by scope and outcome (allowed, denied, locked-out, degraded-allowed, degraded-denied, shadow).',
    labelNames: ['scope', 'outcome'] as const,
    registers,
  });
  const latency = new Histogram({
    name: `${prefix}decision_duration_seconds`,
    help: "Time a limiter took to decide, the store's round trip included.",
    labelNames: ['scope'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const nearLimit = new Counter({
    name: `${prefix}near_limit_total`,
    help: 'Allowed decisions that left under 20% of the limit: clients close to being denied.',
    labelNames: ['scope'] as const,
    registers,
  });
  new Gauge({
    name: `${prefix}store_up`,
    help: 'Whether the store answers (1) or not (0), checked at each scrape.',
    registers,
    async collect() {
      this.set((await healthy(storeHealth)) ? 1 : 0);
    },
  });

  // Label lookups are cached per scope: prom-client would otherwise hash the label set on every decision.
  const series = new Map<string, ScopeSeries>();
  const seriesOf = (scope: string): ScopeSeries => {
    let found = series.get(scope);
    if (found === undefined) {
      found = { decisions: new Map(), latency: latency.labels(scope), nearLimit: nearLimit.labels(scope) };
      series.set(scope, found);
    }
    return found;
  };

  const onDecision = ({ scope, decision, latencyMs, shadow }: DecisionEvent) => {
    const { decisions: byOutcome, latency: timing, nearLimit: near } = seriesOf(scope);
    const outcome = decisionOutcome(decision, shadow);
    let counter = byOutcome.get(outcome);
    if (counter === undefined) {
      counter = decisions.labels(scope, outcome);
      byOutcome.set(outcome, counter);
    }
    counter.inc();
    timing.observe(latencyMs / 1000);
    if (isNearLimit(decision)) near.inc();
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

async function healthy(check: (() => boolean | Promise<boolean>) | undefined): Promise<boolean> {
  if (check === undefined) return true;
  try {
    return await check();
  } catch {
    return false;
  }
}
