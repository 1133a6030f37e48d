// A limiter whose policies include local ones: the local policies asked in this process first, then the store's
// limiter (when it has policies of its own) for what is left.

import { configError } from '../core/errors.js';
import type { Decision } from '../decision/decision.js';
import { isLocalPolicy, type LocalPolicy } from '../policies/local-policy.js';
import type { AnyPolicy } from '../policies/policy.js';
import { validateScope } from '../stores/key.js';
import { sharedMemoryStore } from '../stores/memory/shared-memory-store.js';
import type { ConsumeOptions, Limiter } from './limiter-interface.js';
import {
  admitLocal,
  allowed,
  cancel,
  peekLocal,
  queueLocal,
  type Taken,
  withLocal,
} from './local-policies.js';
import type { LimiterOptions } from './resolve-options.js';
import { waitBudget } from './wait.js';

/** The policies `options.policy` names, the local ones apart; none local: `undefined`. */
export function localPolicies(options: LimiterOptions): readonly LocalPolicy[] | undefined {
  const given = (Array.isArray(options?.policy) ? options.policy : [options?.policy]) as readonly unknown[];
  const local = given.filter(isLocalPolicy);
  if (local.length === 0) return undefined;
  if (new Set(local.map((p) => p.name)).size !== local.length)
    throw configError('policy', 'names must be unique within a limiter (set `name`)');
  return local;
}

/**
 * A limiter of `local` policies in front of `stored`, the store's limiter of the other policies (undefined when
 * every policy is local: no store is asked then). Refunds, blocks and resets concern the store's policies alone.
 */
export function withLocalPolicies(
  local: readonly LocalPolicy[],
  stored: Limiter | undefined,
  options: LimiterOptions,
): Limiter {
  if (stored === undefined && options.blockMs !== undefined)
    throw configError(
      'blockMs',
      'needs a policy kept in a store: local policies alone have nothing to lock out',
    );
  // A merged decision names the store's own admission, which alone can be refunded.
  const storedOf = new WeakMap<Decision, Decision>();
  const merge = (decision: Decision | undefined, taken: readonly Taken[]) => {
    const merged = withLocal(decision, taken, decision?.nowMs ?? Date.now());
    if (decision !== undefined) storedOf.set(merged, decision);
    return merged;
  };
  const consume = async (identifier: string, consumeOptions?: ConsumeOptions) => {
    const taken = admitLocal(local, consumeOptions?.partition);
    if (!allowed(taken) || stored === undefined) return merge(undefined, taken);
    return merge(await settled(taken, () => stored.consume(identifier, consumeOptions)), taken);
  };
  return {
    scope: stored?.scope ?? validateScope(options.scope ?? (local[0] as LocalPolicy).name),
    policies: stored?.policies ?? ([] as AnyPolicy[]),
    store: stored?.store ?? options.store ?? sharedMemoryStore(),
    local,
    consume,
    consumeSync: (identifier, consumeOptions) => {
      const taken = admitLocal(local, consumeOptions?.partition);
      if (!allowed(taken) || stored === undefined) return merge(undefined, taken);
      return merge(
        settledNow(taken, () => stored.consumeSync(identifier, consumeOptions)),
        taken,
      );
    },
    peek: async (identifier, consumeOptions) => {
      const taken = peekLocal(local, consumeOptions?.partition);
      return merge(await stored?.peek(identifier, consumeOptions), taken);
    },
    wait: async (identifier, waitOptions) => {
      const started = Date.now();
      const taken = await queueLocal(local, waitOptions?.partition, waitOptions);
      if (stored === undefined) return merge(undefined, taken);
      // The store's part gets what is left of the wait: the whole of it is `maxWaitMs`.
      const maxWaitMs = waitBudget(waitOptions?.maxWaitMs) - (Date.now() - started);
      const rest = { ...waitOptions, maxWaitMs: Math.max(0, maxWaitMs) };
      return merge(await settled(taken, () => stored.wait(identifier, rest)), taken);
    },
    refund: async (identifier, refundOptions) => {
      const spent = refundOptions?.spent;
      if (stored === undefined) return;
      const named =
        spent === undefined ? refundOptions : { ...refundOptions, spent: storedOf.get(spent) ?? spent };
      await stored.refund(identifier, named);
    },
    block: async (identifier, ms) => (stored ?? unblockable()).block(identifier, ms),
    unblock: async (identifier) => (stored ?? unblockable()).unblock(identifier),
    reset: async (identifier) => stored?.reset(identifier),
  };
}

/** The store's decision; a denial or a failure gives the local slots back, since the request will not run. */
async function settled(taken: readonly Taken[], ask: () => Promise<Decision>): Promise<Decision> {
  try {
    const decision = await ask();
    if (!decision.allowed) cancel(taken);
    return decision;
  } catch (error) {
    cancel(taken);
    throw error;
  }
}

function settledNow(taken: readonly Taken[], ask: () => Decision): Decision {
  try {
    const decision = ask();
    if (!decision.allowed) cancel(taken);
    return decision;
  } catch (error) {
    cancel(taken);
    throw error;
  }
}

function unblockable(): never {
  throw configError(
    'blockMs',
    'must be set for block() and unblock(), on a limiter with a policy kept in a store',
  );
}
