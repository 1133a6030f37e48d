// The rate limit service's metrics: each limit's counters as the reference service keeps them, and the service's
// own (configuration loads, requests, store errors, response times), as Prometheus text.
import { nonNegativeInteger, positiveInteger } from '../../core/validate.js';
import type { DescriptorOutcome, ServiceObserver } from '../engine/observer.js';
import { Exposition, MsHistogram } from './exposition.js';

export interface ServiceMetricsOptions {
  /**
   * The most configured limits' keys counted apart (default 10,000); later ones are counted together under the key
   * `_other`. The files bound them: this only guards against reloads piling up keys.
   */
  readonly maxKeys?: number;
  /**
   * The most keys made of request values counted apart (default 1,000): those of `detailed_metric`,
   * `value_to_metric` and a request's own limit, which a client picks. Later ones count under `_other`, from a
   * budget of their own, so a client sending new values can never take a configured limit's series.
   */
  readonly maxRequestKeys?: number;
}

export interface ServiceMetrics extends ServiceObserver {
  /** A configuration (re)load, successful or refused. */
  configLoad(ok: boolean): void;
  /** Every metric in Prometheus's text exposition format. */
  text(): string;
}

/** The key that limits past `maxKeys` or `maxRequestKeys` are counted under. */
export const OTHER_KEY = '_other';

const PREFIX = 'tollgate_service_';
const PROTOCOLS = ['grpc', 'http', 'json'] as const;
const RESULTS = ['ok', 'over_limit', 'invalid', 'error'] as const;
/** Response-time bounds in ms: the service answers from memory in well under one, from Redis in a few. */
const DURATION_BOUNDS_MS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000];

/** Each limit's counters, named after the reference's `ratelimit.service.rate_limit.<key>.<counter>`. */
const KEY_COUNTERS = [
  ['rate_limit_hits_total', 'Hits asked of the limit (the reference total_hits).'],
  ['rate_limit_over_limit_total', 'Hits over the limit, shadow mode included (the reference over_limit).'],
  [
    'rate_limit_near_limit_total',
    'Allowed hits with under a fifth of the limit left (the reference near_limit).',
  ],
  ['rate_limit_within_limit_total', 'Allowed hits, near the limit included (the reference within_limit).'],
  [
    'rate_limit_shadow_mode_total',
    'Hits over the limit let through by shadow mode (the reference shadow_mode).',
  ],
] as const;
const [HITS, OVER, NEAR, WITHIN, SHADOW] = [0, 1, 2, 3, 4] as const;

/** What the metrics have counted so far. */
interface Counts {
  /** Per limit key: its counters, in KEY_COUNTERS' order. */
  readonly byKey: Map<string, number[]>;
  readonly configLoads: { success: number; error: number };
  /** Per `protocol result`. */
  readonly requests: Map<string, number>;
  readonly durations: ReadonlyMap<string, MsHistogram>;
  storeErrors: number;
}

/** Metrics for `tollgate serve`: give it to the engine and the servers as their observer, and serve `text()`. */
export function createServiceMetrics(options: ServiceMetricsOptions = {}): ServiceMetrics {
  const budgets = {
    configured: positiveInteger('maxKeys', options.maxKeys ?? 10_000),
    request: nonNegativeInteger('maxRequestKeys', options.maxRequestKeys ?? 1_000),
  };
  const counts: Counts = {
    byKey: new Map(),
    configLoads: { success: 0, error: 0 },
    requests: new Map(),
    durations: new Map(PROTOCOLS.map((protocol) => [protocol, new MsHistogram(DURATION_BOUNDS_MS)])),
    storeErrors: 0,
  };
  const countersOf = (statsKey: string, fromRequest: boolean): number[] => {
    const known = counts.byKey.get(statsKey);
    if (known !== undefined) return known;
    const budget = fromRequest ? 'request' : 'configured';
    const key = budgets[budget] > 0 ? statsKey : OTHER_KEY;
    if (key !== OTHER_KEY) budgets[budget]--;
    const counters = counts.byKey.get(key) ?? [0, 0, 0, 0, 0];
    counts.byKey.set(key, counters);
    return counters;
  };
  const add = (counters: number[], index: number, hits: number) => {
    counters[index] = (counters[index] ?? 0) + hits;
  };

  return {
    descriptor({ statsKey, hits, level, shadow, fromRequest }: DescriptorOutcome) {
      const counters = countersOf(statsKey, fromRequest);
      add(counters, HITS, hits);
      add(counters, level === 'over' ? OVER : WITHIN, hits);
      if (level === 'near') add(counters, NEAR, hits);
      if (level === 'over' && shadow) add(counters, SHADOW, hits);
    },
    request(protocol, ms, result) {
      const series = `${protocol} ${result}`;
      counts.requests.set(series, (counts.requests.get(series) ?? 0) + 1);
      counts.durations.get(protocol)?.observe(ms);
    },
    storeError() {
      counts.storeErrors++;
    },
    configLoad(ok) {
      counts.configLoads[ok ? 'success' : 'error']++;
    },
    text: () => expose(counts),
  };
}

/** Every family, every known label value written even at zero so that rates start from the first scrape. */
function expose({ byKey, configLoads, requests, durations, storeErrors }: Counts): string {
  const exposition = new Exposition();
  KEY_COUNTERS.forEach(([name, help], index) => {
    exposition.family(PREFIX + name, 'counter', help);
    for (const [key, counters] of byKey) exposition.sample(PREFIX + name, { key }, counters[index] ?? 0);
  });
  const loads = `${PREFIX}config_loads_total`;
  exposition.family(loads, 'counter', 'Configuration loads, by result.');
  for (const [result, count] of Object.entries(configLoads)) exposition.sample(loads, { result }, count);
  const answered = `${PREFIX}requests_total`;
  exposition.family(answered, 'counter', 'Requests answered, by protocol and result.');
  for (const protocol of PROTOCOLS)
    for (const result of RESULTS)
      exposition.sample(answered, { protocol, result }, requests.get(`${protocol} ${result}`) ?? 0);
  const errors = `${PREFIX}store_errors_total`;
  exposition.family(errors, 'counter', 'Store failures answered by a fail mode.');
  exposition.sample(errors, {}, storeErrors);
  const duration = `${PREFIX}request_duration_seconds`;
  exposition.family(duration, 'histogram', 'Time to answer a request, by protocol.');
  for (const [protocol, histogram] of durations) histogram.write(exposition, duration, { protocol });
  return exposition.text();
}
