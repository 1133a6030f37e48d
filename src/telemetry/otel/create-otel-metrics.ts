// OpenTelemetry metrics for decisions, stores and adaptive limits: the figures tollgate/metrics gives Prometheus.
import type {
  Attributes,
  BatchObservableCallback,
  Meter,
  MeterProvider,
  Observable,
  ObservableCallback,
} from '@opentelemetry/api';
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
  otelName,
  STORE_UP,
  seriesByScope,
  storeUpReading,
} from '../observability.js';

export interface OtelMetricsOptions {
  /** The meter to create the instruments with. Default: `meterProvider.getMeter('tollgate')`. */
  readonly meter?: Meter;
  /** Where the meter comes from when none is given. Default: the global one (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider;
  /** Prefix of every instrument name. Default 'tollgate.'. */
  readonly prefix?: string;
  /** Read at each collection for the store health gauge; true when the store answers. Without it the gauge is 1. */
  readonly storeHealth?: () => boolean | Promise<boolean>;
  /** Stores whose own figures (timeouts, errors, breakers, batches...) are read at each collection: `store.stats()`. */
  readonly stores?: readonly { stats(): StoreStats }[];
  /**
   * Adaptive concurrency limits (the `adaptiveConcurrency()` objects given to `createLimiter`), read at each
   * collection (`limit.stats()`): `tollgate.adaptive.limit`, `.in_flight` and `.rtt` (seconds, by `kind`) observable
   * gauges, and `.completed`, `.rejections` and `.drops` observable counters. Each point's attribute `limiter` is
   * the limit's `name` (so each needs its own), and `partition` its partition, none for requests of no partition.
   */
  readonly adaptive?: readonly { stats(): AdaptiveStats }[];
}

export interface TollgateOtelMetrics {
  /** Give it to the gate as `onDecision` (or call it from your own): a counter and a histogram, one counter more near the limit. */
  readonly onDecision: (event: DecisionEvent) => void;
  /** Stops reading the stores, their health and the adaptive limits at collections (the instruments stay, with no new points). */
  close(): void;
}

/**
 * The global meter provider, through @opentelemetry/api loaded only when it is needed: it is an optional peer, so
 * `import 'tollgate/otel'` works in any install, and an application that passes a meter never loads it from here.
 */
function globalMeterProvider(): MeterProvider {
  const api = optionalPeer<typeof import('@opentelemetry/api')>(
    '@opentelemetry/api',
    'createOtelMetrics',
    ', or a `meter`',
  );
  return api.metrics.getMeterProvider();
}

function chosenMeter({ meter, meterProvider }: OtelMetricsOptions): Meter {
  if (meter !== undefined) {
    if (typeof meter?.createCounter !== 'function')
      throw configError('meter', 'must be an OpenTelemetry Meter');
    if (meterProvider !== undefined) throw configError('meterProvider', 'cannot be combined with `meter`');
    return meter;
  }
  const provider = meterProvider ?? globalMeterProvider();
  if (typeof provider?.getMeter !== 'function')
    throw configError('meterProvider', 'must be an OpenTelemetry MeterProvider');
  return provider.getMeter('tollgate');
}

function described(instrument: Instrument): { description: string; unit: string } {
  return { description: instrument.help, unit: instrument.unit };
}

export function createOtelMetrics(options: OtelMetricsOptions = {}): TollgateOtelMetrics {
  const prefix = options.prefix ?? 'tollgate.';
  // An instrument name starts with a letter and holds letters, digits, `_`, `.`, `-` and `/` (the words added do).
  if (typeof prefix !== 'string' || !/^[A-Za-z][\w./-]*$|^$/.test(prefix))
    throw configError('prefix', 'must be a valid OpenTelemetry instrument name prefix', prefix);
  const storeUp = storeUpReading(options.storeHealth);
  const stores = observeStores(options.stores);
  const adaptive = observeAdaptive(options.adaptive);
  const meter = chosenMeter(options);

  const decisions = meter.createCounter(otelName(prefix, DECISIONS), described(DECISIONS));
  const duration = meter.createHistogram(otelName(prefix, DECISION_DURATION), {
    ...described(DECISION_DURATION),
    advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
  });
  const nearLimit = meter.createCounter(otelName(prefix, NEAR_LIMIT), described(NEAR_LIMIT));

  const up = meter.createObservableGauge(otelName(prefix, STORE_UP), described(STORE_UP));
  const observeUp: ObservableCallback = async (result) => result.observe(await storeUp());
  up.addCallback(observeUp);

  const unobserveFigures = observeFigures(meter, prefix, stores, adaptive);

  // Attribute sets made once per scope and outcome, not per decision.
  const seriesOf = seriesByScope<Attributes, Attributes>(
    (scope) => ({ scope }),
    (scope, outcome) => ({ scope, outcome }),
  );

  const onDecision = ({ scope, decision, latencyMs, shadow }: DecisionEvent) => {
    const series = seriesOf(scope);
    decisions.add(1, series.outcome(decisionOutcome(decision, shadow)));
    duration.record(latencyMs / 1000, series.scoped);
    if (isNearLimit(decision)) nearLimit.add(1, series.scoped);
  };

  const close = () => {
    up.removeCallback(observeUp);
    unobserveFigures();
  };

  return { onDecision, close };
}

/** The stores' and the adaptive limits' figures, read at each collection; returns what stops reading them. */
function observeFigures(
  meter: Meter,
  prefix: string,
  stores: ObservedStores,
  adaptive: ObservedAdaptive,
): () => void {
  const observed = (instrument: Instrument & { readonly kind: 'counter' | 'gauge' }) =>
    instrument.kind === 'counter'
      ? meter.createObservableCounter(otelName(prefix, instrument), described(instrument))
      : meter.createObservableGauge(otelName(prefix, instrument), described(instrument));
  const unobserveStores = observeTogether(meter, stores.instruments.map(observed), () => {
    const stats = stores.read();
    return stores.instruments.map((instrument) =>
      instrument
        .series(stats)
        .map((series) => ({ labels: labelsOf(instrument, series), value: series.value })),
    );
  });
  const unobserveAdaptive = observeTogether(meter, adaptive.instruments.map(observed), () => {
    const stats = adaptive.read();
    return adaptive.instruments.map((instrument) => instrument.series(stats));
  });
  return () => {
    unobserveStores();
    unobserveAdaptive();
  };
}

/**
 * Observable instruments read by one callback per collection (one read of every store, or of every adaptive limit,
 * shared by all their instruments): `read` gives each instrument's series, in order. Returns what stops it.
 */
function observeTogether(
  meter: Meter,
  observables: readonly Observable[],
  read: () => readonly (readonly LabelledSeries[])[],
): () => void {
  if (observables.length === 0) return () => {};
  const callback: BatchObservableCallback = (result) => {
    read().forEach((series, at) => {
      const observable = observables[at] as Observable;
      for (const { labels, value } of series) result.observe(observable, value, labels);
    });
  };
  meter.addBatchObservableCallback(callback, [...observables]);
  return () => meter.removeBatchObservableCallback(callback, [...observables]);
}
