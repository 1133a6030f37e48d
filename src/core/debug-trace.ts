// NODE_DEBUG=tollgate: each step of each request printed as it happens, numbered per request, to standard error.
import { AsyncLocalStorage } from 'node:async_hooks';
import { debuglog } from 'node:util';
import { STEPS, TRACES, type TraceContext, type TraceName, watch } from './trace.js';

/** What each traced step prints when it starts, and when it ends. */
type Lines = {
  readonly [Name in TraceName]: {
    readonly start: (context: TraceContext) => string;
    readonly end: (context: TraceContext) => string | undefined;
  };
};

/** Figures of a decision or a store response, as far as printing needs them. */
interface Answer {
  readonly allowed?: boolean;
  readonly remaining?: number;
  readonly limit?: number;
  readonly retryAfterMs?: number;
  readonly degraded?: string;
  readonly policies?: readonly { readonly allowed: boolean; readonly policy: { readonly name: string } }[];
}

const LINES: Lines = {
  request: {
    start: ({ adapter }) => `request through ${String(adapter)}`,
    end: ({ result, error }) =>
      error === undefined ? `outcome: ${outcomeOf(result)}` : `outcome: failed (${messageOf(error)})`,
  },
  decision: {
    start: ({ scope, action, cost, key, store }) =>
      `limiter ${String(scope)}: ${String(action)} ${String(cost)} under key ${String(key)}, store ${String(store)}`,
    end: ({ result, error }) =>
      error === undefined
        ? `decision: ${decisionOf(result as Answer)}`
        : `decision failed: ${messageOf(error)}`,
  },
  store: {
    start: ({ node, slot, action }) => `redis store: ${String(action)} on ${nodeOf(node, slot)}`,
    end: ({ result, error, denyCache, batch, node, slot }) => {
      if (error !== undefined) return `redis store failed: ${messageOf(error)}`;
      const { degraded } = result as Answer;
      if (denyCache === true) return 'deny cache: denied again without asking Redis';
      if (degraded !== undefined) return `fail mode: ${degraded} answered`;
      return `redis store answered from ${nodeOf(node, slot)}, a batch of ${String(batch)}`;
    },
  },
  engine: {
    start: ({ engine, node, slot, decisions }) =>
      `engine call: ${String(engine)} on ${nodeOf(node, slot)}, carrying ${String(decisions)} decision(s)`,
    end: ({ error, node, slot }) =>
      error === undefined
        ? `engine call answered by ${nodeOf(node, slot)}`
        : `engine call failed: ${messageOf(error)}`,
  },
};

/** Starts printing every step when NODE_DEBUG names tollgate; else does nothing. */
export function installDebugTrace(): void {
  const print = debuglog('tollgate');
  if (print.enabled) printSteps((line) => print(line));
}

/**
 * Hands `sink` one line per step of every request from now on, each after the request's number (`#3 ...`); returns
 * the stop. The lines of NODE_DEBUG=tollgate, for a test or a tool that wants them elsewhere.
 */
export function printSteps(sink: (line: string) => void): () => void {
  const requests = new AsyncLocalStorage<number>();
  let last = 0;
  const line = (text: string | undefined) => {
    if (text !== undefined) sink(`#${requests.getStore() ?? '?'} ${text}`);
  };
  const stops = (Object.keys(TRACES) as TraceName[]).map((name) => {
    const channel = TRACES[name];
    // A request keeps its number through every step it takes, the decision of a gate's request included.
    channel.start.bindStore(requests, () => requests.getStore() ?? ++last);
    const lines = LINES[name];
    const unwatch = watch(channel, {
      started: (context) => line(lines.start(context)),
      ended: (context) => line(lines.end(context)),
    });
    return () => {
      channel.start.unbindStore(requests);
      unwatch();
    };
  });
  const step = (message: unknown) => {
    const { step: name, ...fields } = message as { step: string } & Record<string, unknown>;
    line(`${name}: ${Object.values(fields).map(String).join(' ')}`);
  };
  STEPS.subscribe(step);
  return () => {
    for (const stop of stops) stop();
    STEPS.unsubscribe(step);
  };
}

function decisionOf(decision: Answer): string {
  const denying = (decision.policies ?? []).filter((p) => !p.allowed).map((p) => `"${p.policy.name}"`);
  const figures = `${String(decision.remaining)} of ${String(decision.limit)} left`;
  const { degraded } = decision;
  // A fail mode's figures say nothing of the client: only what answered does.
  if (degraded === 'fail-open' || degraded === 'fail-closed')
    return `${decision.allowed === true ? 'allowed' : 'denied'} by the fail mode (${degraded})`;
  const mode = degraded === undefined ? '' : `, by the ${degraded}`;
  if (decision.allowed === true) return `allowed, ${figures}${mode}`;
  const retry =
    decision.retryAfterMs === undefined ? 'no wait helps' : `retry in ${decision.retryAfterMs} ms`;
  return `denied${denying.length === 0 ? '' : ` by ${denying.join(', ')}`}, ${retry}${mode}`;
}

function outcomeOf(outcome: unknown): string {
  const { action, status } = outcome as { action: string; status?: number };
  return status === undefined ? action : `${action} ${status}`;
}

/** A node by its address; in a cluster whose slot map is not known yet, by the slot of the key it owns. */
function nodeOf(node: unknown, slot: unknown): string {
  const of = slot === undefined ? '' : ` (slot ${String(slot)})`;
  if (node !== '' && node !== undefined) return `node ${String(node)}${of}`;
  return slot === undefined ? 'the Redis server' : `the node of slot ${String(slot)}`;
}
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
