// `tollgate/otel`: OpenTelemetry metrics through @opentelemetry/api, kept out of `tollgate` so the core never loads it.
export {
  createOtelMetrics,
  type OtelMetricsOptions,
  type TollgateOtelMetrics,
} from './create-otel-metrics.js';
