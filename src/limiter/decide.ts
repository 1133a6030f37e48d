// A consume or a peek: asked of the store (at once when it answers at once), turned into the limiter's decision.

import { configError, storeError } from '../core/errors.js';
import { isPending } from '../core/pending.js';
import { type Decision, toDecision } from '../decision/decision.js';
import type { StoreAction } from '../policies/evaluate.js';
import { encodeIdentifier } from '../stores/key.js';
import { isFailMode, type StoreResponse } from '../stores/store.js';
import { units } from './checks.js';
import { leaseName, once } from './lease.js';
import { recordSpend } from './refund-spend.js';
import type { ResolvedLimiter } from './resolve-options.js';
import { ask, type Extra, release } from './store-request.js';
import { traceDecision, tracingDecisions } from './trace-decision.js';

/** Every step awaited, on a store that may answer later (Redis); `waiting` is what a wait adds to a consume. */
export function decide(
  limiter: ResolvedLimiter,
  identifier: string,
  action: StoreAction,
  requested: number,
  waiting?: Extra,
): Promise<Decision> {
  if (!tracingDecisions()) return deciding(limiter, identifier, action, requested, waiting);
  return traceDecision(limiter, identifier, action, requested, () =>
    deciding(limiter, identifier, action, requested, waiting),
  );
}

async function deciding(
  limiter: ResolvedLimiter,
  identifier: string,
  action: StoreAction,
  requested: number,
  waiting: Extra | undefined,
): Promise<Decision> {
  const cost = units(requested);
  const lease = leaseFor(limiter, action, cost);
  const answer = ask(limiter, identifier, action, cost, lease, waiting);
  // An in-process store answers synchronously: awaiting it anyway would cost a turn of the microtask queue.
  return settle(limiter, identifier, action, cost, lease, isPending(answer) ? await answer : answer);
}

/** A consume or a peek on a synchronous store, without a promise. */
function decideNow(
  limiter: ResolvedLimiter,
  identifier: string,
  action: 'consume' | 'peek',
  requested: number,
): Decision {
  const cost = units(requested);
  const { alone } = limiter;
  if (alone !== undefined) {
    const id = encodeIdentifier(identifier);
    const decision = alone.decideAlone(limiter.scope, id, limiter.sole, action, cost, limiter.answerAlone);
    return decision.allowed && action === 'consume'
      ? recordSpend(decision, limiter, identifier, cost)
      : decision;
  }
  const lease = leaseFor(limiter, action, cost);
  const answer = ask(limiter, identifier, action, cost, lease);
  if (isPending(answer)) throw storeError('the store declares `synchronous` but answered with a promise');
  return settle(limiter, identifier, action, cost, lease, answer);
}

/** A synchronous decision as `consume` and `peek` return it: a promise, and a throw as its rejection. */
export function promised(
  limiter: ResolvedLimiter,
  identifier: string,
  action: 'consume' | 'peek',
  cost: number,
): Promise<Decision> {
  try {
    return Promise.resolve(tracedNow(limiter, identifier, action, cost));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `consumeSync`: refused, spending nothing, on a store that does not answer at once. */
export function consumeNow(
  limiter: ResolvedLimiter,
  identifier: string,
  options: { readonly cost?: number } | undefined,
): Decision {
  if (!limiter.synchronous)
    throw configError(
      'store',
      'must answer synchronously for consumeSync() (a MemoryStore, or a store whose `synchronous` is true); use consume()',
    );
  return tracedNow(limiter, identifier, 'consume', options?.cost ?? limiter.defaultCost);
}

function tracedNow(
  limiter: ResolvedLimiter,
  identifier: string,
  action: 'consume' | 'peek',
  cost: number,
): Decision {
  if (!tracingDecisions()) return decideNow(limiter, identifier, action, cost);
  return traceDecision(limiter, identifier, action, cost, () => decideNow(limiter, identifier, action, cost));
}

function leaseFor(limiter: ResolvedLimiter, action: StoreAction, cost: number): string {
  return limiter.leases && action === 'consume' && cost > 0 ? leaseName() : '';
}

/** The store's answer as a decision; an admission records what it spent, and gets a release when it holds a slot. */
function settle(
  limiter: ResolvedLimiter,
  identifier: string,
  action: StoreAction,
  cost: number,
  lease: string,
  response: StoreResponse,
): Decision {
  const decision = toDecision(limiter.enforced, response);
  if (!decision.allowed || action !== 'consume') return decision;
  // A fail-open admission took no slot anywhere: there is nothing to release, and nothing spent to refund.
  const failed = isFailMode(decision.degraded);
  if (lease !== '' && !failed)
    (decision as { release?: () => Promise<void> }).release = once(() => release(limiter, identifier, lease));
  return recordSpend(decision, limiter, identifier, failed ? 0 : cost);
}
