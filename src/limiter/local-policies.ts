// A limiter's local policies (an adaptive concurrency limit): asked first, in this process, before the store's
// policies, their slots given back when the store denies and released, measured, when the request ends.

import type { Decision, PolicyDecision } from '../decision/decision.js';
import type { Ending, LocalPolicy, LocalSlot } from '../policies/local-policy.js';
import type { PolicyResult } from '../policies/policy.js';
import { once } from './lease.js';
import { waitBudget } from './wait.js';

/** What a local policy answered one request, and the slot it holds when it admitted. */
export interface Taken {
  readonly policy: LocalPolicy;
  readonly result: PolicyResult;
  readonly slot: LocalSlot | undefined;
}

/** Each local policy in turn, until one denies: then the slots taken so far are given back. */
export function admitLocal(local: readonly LocalPolicy[], partition: string | undefined): Taken[] {
  const taken: Taken[] = [];
  for (const policy of local) {
    const { result, slot } = policy.admit(partition);
    taken.push({ policy, result, slot });
    if (!result.allowed) {
      cancel(taken);
      break;
    }
  }
  return taken;
}

/** Every local policy's answer, taking nothing. */
export function peekLocal(local: readonly LocalPolicy[], partition: string | undefined): Taken[] {
  return local.map((policy) => ({ policy, result: policy.peek(partition), slot: undefined }));
}

/**
 * A slot of each local policy, waited for in each one's line in turn; what was taken is given back when a later
 * one fails.
 */
export async function queueLocal(
  local: readonly LocalPolicy[],
  partition: string | undefined,
  options: { readonly maxWaitMs?: number; readonly signal?: AbortSignal } | undefined,
): Promise<Taken[]> {
  const maxWaitMs = waitBudget(options?.maxWaitMs);
  const signal = options?.signal;
  const deadline = Date.now() + maxWaitMs;
  const taken: Taken[] = [];
  try {
    for (const policy of local) {
      const left = Math.max(0, deadline - Date.now());
      taken.push({ policy, ...(await policy.queue({ partition, maxWaitMs: left, signal })) });
    }
  } catch (error) {
    cancel(taken);
    throw error;
  }
  return taken;
}

export function allowed(taken: readonly Taken[]): boolean {
  return taken.every(({ result }) => result.allowed);
}

/** Gives back every slot taken, measuring none: the request never ran. */
export function cancel(taken: readonly Taken[]): void {
  for (const { slot } of taken) slot?.cancel();
}

/**
 * The decision with the local policies' results after the store's: a denial by a local policy (the store not
 * asked) is bound by it and answers with its status; an admission is bound by whichever has the fewest left, and
 * its release frees the local slots (measuring them) as well as the store's.
 */
export function withLocal(stored: Decision | undefined, taken: readonly Taken[], nowMs: number): Decision {
  const locals: PolicyDecision[] = taken.map(({ policy, result }) => ({ ...result, policy: policy.facts() }));
  const policies = stored === undefined ? locals : [...stored.policies, ...locals];
  const denying = taken.find(({ result }) => !result.allowed);
  if (denying !== undefined) return localDenial(denying, policies, nowMs);
  if (stored !== undefined && !stored.allowed) return { ...stored, policies };
  return admission(stored, locals, policies, nowMs, taken);
}

function localDenial(
  { policy, result }: Taken,
  policies: readonly PolicyDecision[],
  nowMs: number,
): Decision {
  return {
    allowed: false,
    limit: policy.limit,
    remaining: result.remaining,
    resetMs: result.resetMs,
    retryAfterMs: result.retryAfterMs,
    nowMs,
    policies,
    denyStatus: policy.denyStatus,
  };
}

/** An admission bound by the store's figures, unless a local policy has fewer left. */
function admission(
  stored: Decision | undefined,
  locals: readonly PolicyDecision[],
  policies: readonly PolicyDecision[],
  nowMs: number,
  taken: readonly Taken[],
): Decision {
  let { limit, remaining, resetMs } = stored ?? { limit: 0, remaining: Number.POSITIVE_INFINITY, resetMs: 0 };
  for (const local of locals)
    if (local.remaining < remaining)
      ({
        remaining,
        resetMs,
        policy: { limit },
      } = local);
  const decision: { -readonly [K in keyof Decision]: Decision[K] } = {
    allowed: true,
    limit,
    remaining,
    resetMs,
    nowMs: stored?.nowMs ?? nowMs,
    policies,
  };
  const storeRelease = stored?.release;
  // A peek holds nothing: only an admission that took a slot gets a release.
  if (taken.some(({ slot }) => slot !== undefined))
    decision.release = once((ending?: Ending) => releaseAll(taken, storeRelease, ending));
  if (stored?.degraded !== undefined) decision.degraded = stored.degraded;
  if (stored?.delayMs !== undefined) decision.delayMs = stored.delayMs;
  return decision;
}

/** Every slot released, the store's too, whatever one of them throws; the first error, once all are done. */
async function releaseAll(
  taken: readonly Taken[],
  storeRelease: Decision['release'],
  ending: Ending | undefined,
): Promise<void> {
  const errors: unknown[] = [];
  for (const { slot } of taken) {
    try {
      slot?.release(ending);
    } catch (error) {
      errors.push(error);
    }
  }
  await storeRelease?.(ending);
  if (errors.length > 0) throw errors[0];
}
