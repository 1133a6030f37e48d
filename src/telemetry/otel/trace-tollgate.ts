// OpenTelemetry spans for each step of a decision, read from Tollgate's diagnostics channels while they are wanted.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Attributes, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import { configError } from '../../core/errors.js';
import { optionalPeer } from '../../core/optional-peer.js';
import { STEPS, TRACES, type TraceContext, type TraceName, watch } from '../../core/trace.js';

type OtelApi = typeof import('@opentelemetry/api');

export interface OtelTracingOptions {
  /** The tracer to start spans with. Default: `tracerProvider.getTracer('tollgate')`. */
  readonly tracer?: Tracer;
  /** Where the tracer comes from when none is given. Default: the global one (`trace.getTracerProvider()`). */
  readonly tracerProvider?: TracerProvider;
  /**
   * Whether spans carry the client's identifier and its bucket key (an address or an API key's hash): off by default,
   * since traces often leave the systems a client's data may be kept in.
   */
  readonly identifiers?: boolean;
}

export interface TollgateOtelTracing {
  /** Stops starting spans; the spans of steps still in flight end at once, marked `tollgate.stopped`. */
  stop(): void;
}

/** Each step's span name, and its attributes when it starts and when it ends. */
const SPANS: Readonly<Record<TraceName, string>> = {
  request: 'tollgate.request',
  decision: 'tollgate.decision',
  store: 'tollgate.store',
  engine: 'tollgate.engine',
};

/**
 * Spans for the steps of every decision from now on: the gate's request, a limiter's decision, a Redis store call
 * (with the size of the batch it went in, or the deny cache's or a fail mode's answer) and each engine call (with
 * its node and the decisions it carried), each the child of the step it is part of, the first under the span
 * active when the request came (a framework's HTTP span, say).
 *
 * @example
 * // Once, at start-up, after the OpenTelemetry SDK has registered its TracerProvider:
 * const tracing = traceTollgate();
 * // tollgate.request > tollgate.decision > tollgate.store > tollgate.engine, under the framework's HTTP span.
 * process.once('SIGTERM', () => tracing.stop());
 *
 * // Or with a provider of one's own, the client's identifier and bucket key on the spans too:
 * traceTollgate({ tracerProvider: provider, identifiers: true });
 */
export function traceTollgate(options: OtelTracingOptions = {}): TollgateOtelTracing {
  const api = optionalPeer<OtelApi>('@opentelemetry/api', 'traceTollgate', ', or a `tracer`');
  const tracer = chosenTracer(api, options);
  const identifiers = options.identifiers ?? false;
  if (typeof identifiers !== 'boolean') throw configError('identifiers', 'must be a boolean', identifiers);
  // The span of the step being run, in each step's async context: the parent of the steps it takes.
  const spans = new AsyncLocalStorage<Span>();
  const stops = (Object.keys(TRACES) as TraceName[]).map((name) =>
    spanEach(name, { api, tracer, spans, identifiers }),
  );
  const step = (message: unknown) => {
    const { step: name, ...fields } = message as { step: string } & Record<string, unknown>;
    spans.getStore()?.addEvent(name, name === 'identity' && !identifiers ? {} : attributes(fields));
  };
  STEPS.subscribe(step);
  stops.push(() => STEPS.unsubscribe(step));
  return {
    stop: () => {
      for (const stop of stops.splice(0)) stop();
    },
  };
}

interface Spanning {
  readonly api: OtelApi;
  readonly tracer: Tracer;
  readonly spans: AsyncLocalStorage<Span>;
  readonly identifiers: boolean;
}

/** A span for each run of the step `name`, started inside its parent's, ended when the step ends; returns the stop. */
function spanEach(name: TraceName, { api, tracer, spans, identifiers }: Spanning): () => void {
  const channel = TRACES[name];
  const open = new Map<TraceContext, Span>();
  channel.start.bindStore(spans, (context) => {
    const parent = spans.getStore();
    const within =
      parent === undefined ? api.context.active() : api.trace.setSpan(api.context.active(), parent);
    const span = tracer.startSpan(SPANS[name], { attributes: started(context, identifiers) }, within);
    open.set(context, span);
    return span;
  });
  const close = (context: TraceContext) => {
    const span = open.get(context);
    if (span === undefined) return;
    open.delete(context);
    span.setAttributes(ended(context));
    if (context.error !== undefined) {
      span.recordException(context.error as Error);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: String((context.error as Error)?.message) });
    }
    span.end();
  };
  const unwatch = watch(channel, { started: () => {}, ended: close });
  return () => {
    channel.start.unbindStore(spans);
    unwatch();
    // Their ends would reach no handler now: a span never ended is never exported.
    for (const span of open.values()) {
      span.setAttribute('tollgate.stopped', true);
      span.end();
    }
    open.clear();
  };
}

function chosenTracer(api: OtelApi, { tracer, tracerProvider }: OtelTracingOptions): Tracer {
  if (tracer !== undefined) {
    if (typeof tracer?.startSpan !== 'function')
      throw configError('tracer', 'must be an OpenTelemetry Tracer');
    if (tracerProvider !== undefined) throw configError('tracerProvider', 'cannot be combined with `tracer`');
    return tracer;
  }
  const provider = tracerProvider ?? api.trace.getTracerProvider();
  if (typeof provider?.getTracer !== 'function')
    throw configError('tracerProvider', 'must be an OpenTelemetry TracerProvider');
  return provider.getTracer('tollgate');
}

/** What a step says when it starts, as span attributes; the identifier and the key only when asked for. */
function started({ identifier, key, ...context }: TraceContext, identifiers: boolean): Attributes {
  return attributes(identifiers ? { ...context, identifier, key } : context);
}

/** What a step's end adds: its decision's figures, a store call's batch, node, deny cache or fail mode, an outcome. */
function ended({ result, denyCache, batch, node }: TraceContext): Attributes {
  const answer = (result ?? {}) as Record<string, unknown>;
  return attributes({
    allowed: answer.allowed,
    remaining: answer.remaining,
    retry_after_ms: answer.retryAfterMs,
    fail_mode: answer.degraded,
    outcome: answer.action,
    status: answer.status,
    deny_cache: denyCache,
    batch,
    // A Redis call made before a cluster's slot map was known learns its node as it is answered.
    node,
  });
}

/** Fields as `tollgate.`-prefixed attributes: only those with a value a span can carry. */
function attributes(fields: Record<string, unknown>): Attributes {
  const out: Attributes = {};
  for (const [field, value] of Object.entries(fields)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      out[`tollgate.${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`] = value;
  }
  return out;
}
