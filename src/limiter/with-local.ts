// A limiter whose policies include local ones: the local policies asked in this process first, then the store's
// limiter (when it has policies of its own) for what is left.

import { configError } from '../core/errors.js';
import { isPending } from '../core/pending.js';
import { knownKeys, positiveInteger } from '../core/validate.js';
import type { Decision } from '../decision/decision.js';
import { isLocalPolicy, type LocalPolicy } from '../policies/local-policy.js';
import type { AnyPolicy } from '../policies/policy.js';
import { validateScope } from '../stores/key.js';
import { sharedMemoryStore } from '../stores/memory/shared-memory-store.js';
import { isStore } from '../stores/store.js';
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
import { LIMITER_OPTIONS, type LimiterOptions } from './resolve-options.js';
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
  if (stored === undefined) checkLocalOnly(options);
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
        settled(taken, () => stored.consumeSync(identifier, consumeOptions)),
        taken,
      );
    },
    peek: async (identifier, consumeOptions) => {
      const taken = peekLocal(local, consumeOptions?.partition);
      return merge(await stored?.peek(identifier, consumeOptions), taken);
    },
    wait: async (identifier, waitOptions) => {
      const partition = waitOptions?.partition;
      if (stored === undefined) return merge(undefined, await queueLocal(local, partition, waitOptions));
      // The store first: a local slot held while the store's quota comes back would keep others from the
      // instance and count the wait in the round trip its release measures.
      const started = Date.now();
      const decision = await stored.wait(identifier, waitOptions);
      const maxWaitMs = Math.max(0, waitBudget(waitOptions?.maxWaitMs) - (Date.now() - started));
      try {
        return merge(decision, await queueLocal(local, partition, { ...waitOptions, maxWaitMs }));
      } catch (error) {
        await giveBack(stored, identifier, decision);
        throw error;
      }
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

/** The store's decision, at once or later; a denial or a failure gives the local slots back: the request won't run. */
function settled(taken: readonly Taken[], ask: () => Decision): Decision;
function settled(taken: readonly Taken[], ask: () => Promise<Decision>): Promise<Decision>;
function settled(
  taken: readonly Taken[],
  ask: () => Decision | Promise<Decision>,
): Decision | Promise<Decision> {
  const given = (decision: Decision) => {
    if (!decision.allowed) cancel(taken);
    return decision;
  };
  const failed = (error: unknown): never => {
    cancel(taken);
    throw error;
  };
  let answer: Decision | Promise<Decision>;
  try {
    answer = ask();
  } catch (error) {
    return failed(error);
  }
  return isPending(answer) ? answer.then(given, failed) : given(answer);
}

/** An admission a wait will not use after all: its units and its store slot given back, as far as the store can. */
async function giveBack(stored: Limiter, identifier: string, decision: Decision): Promise<void> {
  await Promise.all([stored.refund(identifier, { spent: decision }), decision.release?.()]).catch(
    () => undefined,
  );
}

/**
 * The options of a limiter of local policies alone, checked as the store's limiter checks them: those that only a
 * store's policy would use are refused rather than ignored.
 */
function checkLocalOnly(options: LimiterOptions): void {
  knownKeys('createLimiter', options, LIMITER_OPTIONS);
  if (options.blockMs !== undefined)
    throw configError(
      'blockMs',
      'needs a policy kept in a store: local policies alone have nothing to lock out',
    );
  if (options.store !== undefined && !isStore(options.store))
    throw configError('store', 'must implement evaluate() and reset() (a MemoryStore or RedisStore)');
  if (options.cost !== undefined) positiveInteger('cost', options.cost);
  if (options.failOpen !== undefined && typeof options.failOpen !== 'boolean')
    throw configError('failOpen', 'must be a boolean', options.failOpen);
}

function unblockable(): never {
  throw configError(
    'blockMs',
    'must be set for block() and unblock(), on a limiter with a policy kept in a store',
  );
}
