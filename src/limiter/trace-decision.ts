// A limiter's decision as one traced step, named by the key its identifier's first bucket is under.
import { listening, TRACES, traced } from '../core/trace.js';
import type { StoreAction } from '../policies/evaluate.js';
import { bucketKey, encodeIdentifier, memberOf } from '../stores/key.js';
import type { ResolvedLimiter } from './resolve-options.js';

/** Whether anyone listens: a caller asks first, so that an unobserved decision makes no closure for `run`. */
export function tracingDecisions(): boolean {
  return listening(TRACES.decision);
}

/** Runs `run` as the traced decision, its context built only now that someone listens. */
export function traceDecision<T>(
  limiter: ResolvedLimiter,
  identifier: string,
  action: StoreAction,
  cost: number,
  run: () => T,
): T {
  const { scope, store } = limiter;
  const context = {
    scope,
    identifier,
    key: keyOf(limiter, identifier),
    action,
    cost,
    store: store.constructor.name,
  };
  return traced(TRACES.decision, context, run);
}

/** The identifier's first bucket key; none for an identifier the decision itself refuses (and so reports). */
function keyOf({ scope, enforced }: ResolvedLimiter, identifier: string): string | undefined {
  try {
    return bucketKey(scope, encodeIdentifier(identifier), memberOf(enforced, 0));
  } catch {
    return undefined;
  }
}
