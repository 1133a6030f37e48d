// Each step of a decision, published on Node's diagnostics channels for whoever listens: tollgate/otel's spans,
// the debug trace of NODE_DEBUG=tollgate, or an application's own subscriber. Nobody listening costs a flag read.
import { channel, type TracingChannel, tracingChannel } from 'node:diagnostics_channel';
import { isPending } from './pending.js';

/**
 * What a traced step carries: its own fields, set by the step, then `result` or `error` when it ends. Listeners
 * may keep their own fields on it (a span), as on the context object of any TracingChannel.
 */
export interface TraceContext {
  [field: string]: unknown;
  result?: unknown;
  error?: unknown;
  /** Set when the step answers later (a promise): it ends at `asyncEnd`, not at `end`. */
  later?: true;
}

type Steps = TracingChannel<unknown, TraceContext>;

/**
 * The traced steps, outermost first, each a TracingChannel (`start`, `end`, `asyncStart`, `asyncEnd`, `error`) named
 * `tollgate:<step>`: the gate's decision for one request (`adapter`; its result the outcome), a limiter's decision
 * (`scope`, `identifier`, `key`, `action`, `cost`, `store`; its result the decision), a Redis store call (`key`,
 * `node`, `action`; `denyCache` when the deny cache answered, `batch` once its batch was sent), and one engine call
 * on one Redis node (`node`, `slot` in a cluster, `decisions`, `action`, `engine`).
 */
export const TRACES = {
  request: tracingChannel('tollgate:request') as Steps,
  decision: tracingChannel('tollgate:decision') as Steps,
  store: tracingChannel('tollgate:store') as Steps,
  engine: tracingChannel('tollgate:engine') as Steps,
} as const;

export type TraceName = keyof typeof TRACES;

/** What a listener of a step is told: when a run of it starts, and once when it ends, at once or later. */
export interface StepWatcher {
  started(context: TraceContext): void;
  ended(context: TraceContext): void;
}

/** Tells `watcher` of every run of `steps` from now on; returns the function that stops telling it. */
export function watch(steps: Steps, watcher: StepWatcher): () => void {
  const handlers = {
    start: (context: TraceContext) => watcher.started(context),
    // A step that answers later ends at asyncEnd; its `end` only says its function returned.
    end: (context: TraceContext) => {
      if (context.later !== true) watcher.ended(context);
    },
    asyncStart: () => {},
    asyncEnd: (context: TraceContext) => watcher.ended(context),
    error: () => {},
  };
  steps.subscribe(handlers);
  return () => steps.unsubscribe(handlers);
}

/** Points within the current step: `{ step: 'identity' | 'headers', ... }` from the gate. */
export const STEPS = channel('tollgate:step');

/**
 * Whether anyone listens to `steps`: a caller builds a context only then. Asked of `start`, which every listener of a
 * whole step subscribes to (`subscribe` with its handlers, `watch`): TracingChannel's own `hasSubscribers` asks all
 * five channels, which a decision in memory measurably paid for (docs/benchmarks.md).
 */
export function listening(steps: Steps): boolean {
  return steps.start.hasSubscribers;
}

/**
 * Runs `run` as one traced step when someone listens, else simply runs it. A step that answers later (a promise)
 * ends when it settles, as TracingChannel's `tracePromise` does, one that answers at once as `traceSync` does: the
 * same events for either, so a listener need not know which.
 */
export function traced<T>(steps: Steps, context: TraceContext, run: () => T): T {
  if (!listening(steps)) return run();
  return steps.start.runStores(context, () => {
    let result: T;
    try {
      result = run();
    } catch (error) {
      context.error = error;
      steps.error.publish(context);
      steps.end.publish(context);
      throw error;
    }
    if (!isPending(result)) {
      context.result = result;
      steps.end.publish(context);
      return result;
    }
    context.later = true;
    steps.end.publish(context);
    return result.then(
      (value) => settled(steps, context, 'result', value),
      (error: unknown) => {
        steps.error.publish(Object.assign(context, { error }));
        settled(steps, context, 'error', error);
        throw error;
      },
    ) as T;
  });
}

/** A point within the current step, for whoever listens: callers ask `stepping()` first, to build nothing else. */
export function step(name: string, fields: Record<string, unknown>): void {
  STEPS.publish({ step: name, ...fields });
}

/** Whether anyone listens to the points within steps. */
export function stepping(): boolean {
  return STEPS.hasSubscribers;
}

function settled<V>(steps: Steps, context: TraceContext, field: 'result' | 'error', value: V): V {
  context[field] = value;
  steps.asyncStart.publish(context);
  steps.asyncEnd.publish(context);
  return value;
}
