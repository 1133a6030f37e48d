// What a limiter asks of its store: one request shape for every call, and changes that must really happen.

import { storeError } from '../core/errors.js';
import type { Operation, StoreAction } from '../policies/evaluate.js';
import { encodeIdentifier } from '../stores/key.js';
import { isFailMode, type StoreRequest, type StoreResponse } from '../stores/store.js';
import { units } from './checks.js';
import type { ResolvedLimiter } from './resolve-options.js';

/** What a wait, a refund or a block adds to a store request; a plain consume or peek adds nothing. */
export type Extra = Pick<Operation, 'maxDelayMs' | 'waiting' | 'spentAtMs' | 'spentResetMs'>;

/** What a refund, a release or a block asks of the store. */
interface Change {
  readonly units: number;
  readonly lease?: string;
  readonly spentAtMs?: number;
  readonly spentResetMs?: readonly number[];
}

export function ask(
  limiter: ResolvedLimiter,
  identifier: string,
  action: StoreAction,
  cost: number,
  lease: string,
  extra?: Extra,
): StoreResponse | Promise<StoreResponse> {
  const { scope, enforced: policies, failOpen } = limiter;
  const id = encodeIdentifier(identifier);
  // Every field set, in one order, so that every consume has one shape; only a wait, a refund or a block adds more.
  const request: StoreRequest =
    failOpen === undefined
      ? { scope, id, policies, action, cost, lease, maxDelayMs: 0 }
      : { scope, id, policies, action, cost, lease, maxDelayMs: 0, failOpen };
  // Stryker disable next-line ConditionalExpression: spreading nothing is the same request; a consume skips the copy
  return limiter.store.evaluate(extra === undefined ? request : { ...request, ...extra });
}

/** A refund or a block must really happen: a fail mode's answer means it did not. */
export async function change(
  limiter: ResolvedLimiter,
  identifier: string,
  action: StoreAction,
  { units: requested, lease = '', ...spent }: Change,
): Promise<void> {
  const { degraded } = await ask(limiter, identifier, action, units(requested), lease, spent);
  if (isFailMode(degraded)) throw storeError(`the store is unreachable; the ${action} was not applied`);
}

/** Frees the slot `lease` holds, and tells the identifier's line in this process that one is free. */
export async function release(limiter: ResolvedLimiter, identifier: string, lease: string): Promise<void> {
  await change(limiter, identifier, 'refund', { units: 0, lease });
  // Stryker disable next-line OptionalChaining: a limiter with slots to release cannot book them ahead, so has a line
  limiter.line?.released(identifier);
}
