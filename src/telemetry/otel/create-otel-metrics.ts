// OpenTelemetry metrics for Tollgate's decisions and stores, the figures tollgate/metrics gives Prometheus.
import type {
  Attributes,
  BatchObservableCallback,
  Meter,
  MeterProvider,
  Observable,
  ObservableCallback,
} from '@opentelemetry/api';
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
}

export interface TollgateOtelMetrics {
  /** Give it to the gate as `onDecision` (or call it from your own): a counter and a histogram, one counter more near the limit. */
  readonly onDecision: (event: DecisionEvent) => void;
  /** Stops reading the stores and their health at collections (the instruments stay, with no new points). */
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

export function createOtelMetrics(options: OtelMetricsOptions = {}): TollgateOtelMetrics {
  const prefix = options.prefix ?? 'tollgate.';
  // An instrument name starts with a letter and holds letters, digits, `_`, `.`, `-` and `/` (the words added do).
  if (typeof prefix !== 'string' || !/^[A-Za-z][\w./-]*$|^$/.test(prefix))
    throw configError('prefix', 'must be a valid OpenTelemetry instrument name prefix', prefix);
  const storeUp = storeUpReading(options.storeHealth);
  const stores = observeStores(options.stores);
  const meter = chosenMeter(options);
  const described = (instrument: Instrument) => ({ description: instrument.help, unit: instrument.unit });

  const decisions = meter.createCounter(otelName(prefix, DECISIONS), described(DECISIONS));
  const duration = meter.createHistogram(otelName(prefix, DECISION_DURATION), {
    ...described(DECISION_DURATION),
    advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
  });
  const nearLimit = meter.createCounter(otelName(prefix, NEAR_LIMIT), described(NEAR_LIMIT));

  const up = meter.createObservableGauge(otelName(prefix, STORE_UP), described(STORE_UP));
  const observeUp: ObservableCallback = async (result) => result.observe(await storeUp());
  up.addCallback(observeUp);

  const observables: Observable[] = stores.instruments.map((instrument) =>
    instrument.kind === 'counter'
      ? meter.createObservableCounter(otelName(prefix, instrument), described(instrument))
      : meter.createObservableGauge(otelName(prefix, instrument), described(instrument)),
  );
  // One read of every store per collection, shared by all their instruments.
  const readStores: BatchObservableCallback = (result) => {
    const stats = stores.read();
    stores.instruments.forEach((instrument, at) => {
      const observable = observables[at] as Observable;
      for (const series of instrument.series(stats))
        result.observe(observable, series.value, labelsOf(instrument, series));
    });
  };
  if (observables.length > 0) meter.addBatchObservableCallback(readStores, observables);

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
    if (observables.length > 0) meter.removeBatchObservableCallback(readStores, observables);
  };

  return { onDecision, close };
}
