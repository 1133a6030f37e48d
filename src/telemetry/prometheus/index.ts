// `tollgate/metrics`: Prometheus metrics through prom-client, kept out of `tollgate` so the core never loads it.
export {
  createMetrics,
  type DecisionTotals,
  type MetricsOptions,
  type TollgateMetrics,
} from './create-metrics.js';
