// `tollgate/otel`: OpenTelemetry metrics and spans through @opentelemetry/api, kept out of `tollgate` so the core never loads it.
export {
  createOtelMetrics,
  type OtelMetricsOptions,
  type TollgateOtelMetrics,
} from './create-otel-metrics.js';
export { type OtelTracingOptions, type TollgateOtelTracing, traceTollgate } from './trace-tollgate.js';
