// limiter.wait(): booked in the store's own line, or first in this process's line, asking again as capacity returns.

import { argumentError, waitTimeoutError } from '../core/errors.js';
import { MAX_SPAN } from '../core/validate.js';
import type { Decision } from '../decision/decision.js';
import { sleep } from './sleep.js';
import type { Place, WaitLine } from './wait-line.js';

export interface WaitOptions {
  /** Units to spend. Default: the limiter's cost. */
  readonly cost?: number;
  /** The partition of a local policy's limit to wait in (an adaptive limit's `partitions`). */
  readonly partition?: string | undefined;
  /** Aborting it rejects the wait at once with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * Give up as soon as it is clear the request cannot pass within this many ms, and when they have passed.
   * Default: about 24.8 days.
   */
  readonly maxWaitMs?: number;
}

/** The default deadline: the longest delay one Node timer honours (a longer wait must say so). */
const DEFAULT_MAX_WAIT_MS = 2 ** 31 - 1;
/**
 * How often the first in line asks again while a concurrency limit is full and no slot is released in this
 * process: a slot released by another process is taken within about this long.
 */
const RELEASE_POLL_MS = 100;

/** How a limiter takes part in a wait. */
export interface Waiting {
  /** A consume that may be booked up to `maxDelayMs` ahead. */
  attempt(maxDelayMs: number): Promise<Decision>;
  /** Gives back an admission the caller no longer wants (its units, as that decision spent them, and its slot). */
  giveBack(decision: Decision): Promise<void>;
  /**
   * The identifier's line in this process, when a policy cannot be booked ahead (a window, a concurrency limit);
   * undefined when the store books every policy itself, in order (token buckets, a lockout).
   */
  readonly line: WaitLine | undefined;
  readonly identifier: string;
}

/** A wait's `maxWaitMs`, checked; absent, the default. */
export function waitBudget(value: number | undefined): number {
  const maxWaitMs = value ?? DEFAULT_MAX_WAIT_MS;
  if (!Number.isSafeInteger(maxWaitMs) || maxWaitMs < 0 || maxWaitMs >= MAX_SPAN) {
    throw argumentError(`\`maxWaitMs\` must be a non-negative integer below 2^51 (received ${maxWaitMs})`);
  }
  return maxWaitMs;
}

export async function waitFor(waiting: Waiting, options: WaitOptions = {}): Promise<Decision> {
  const { signal } = options;
  const maxWaitMs = waitBudget(options.maxWaitMs);
  signal?.throwIfAborted();
  const deadline = Date.now() + maxWaitMs;
  const { line } = waiting;
  if (line === undefined) return asking(waiting, undefined, deadline, maxWaitMs, signal);
  const place = line.join(waiting.identifier);
  try {
    await place.turn(deadline, maxWaitMs, signal);
    return await asking(waiting, place, deadline, maxWaitMs, signal);
  } finally {
    place.leave();
  }
}

/** Asks until admitted, sleeping between asks: to the retry time, or until a slot is released. */
async function asking(
  waiting: Waiting,
  place: Place | undefined,
  deadline: number,
  maxWaitMs: number,
  signal: AbortSignal | undefined,
): Promise<Decision> {
  for (;;) {
    signal?.throwIfAborted();
    const left = Math.max(0, deadline - Date.now());
    place?.asking();
    const decision = await waiting.attempt(left);
    if (decision.allowed) return admitted(waiting, decision, signal);
    const { exactMs, released } = earliest(decision);
    if (exactMs < 0) throw waitTimeoutError(maxWaitMs, 'it can never pass at this cost');
    if (exactMs > left || (released && left === 0))
      throw waitTimeoutError(
        maxWaitMs,
        exactMs > left ? `the earliest it could pass is in ${exactMs} ms` : 'no slot was released in time',
      );
    place?.notBefore(Date.now() + exactMs);
    // A full concurrency limit frees a slot at any moment: ask on a release here, or soon, for one elsewhere.
    // (Only a concurrency limit releases, and it is never booked ahead: its waiters always have a line.)
    if (released && exactMs === 0 && place !== undefined)
      await place.nap(Math.min(left, RELEASE_POLL_MS), signal);
    else await sleep(exactMs, signal);
  }
}

/** An admission: a booked place is kept even when the caller leaves; an immediate one left behind is given back. */
async function admitted(
  waiting: Waiting,
  decision: Decision,
  signal: AbortSignal | undefined,
): Promise<Decision> {
  // Giving a booked place back could let a later caller go at the instant someone already in line goes.
  if (decision.delayMs !== undefined) await sleep(decision.delayMs, signal);
  else if (signal?.aborted) {
    await waiting.giveBack(decision).catch(() => undefined);
    signal.throwIfAborted();
  }
  return decision;
}

/**
 * When a denied request could pass: `exactMs` is the wait that no release shortens (-1 when no wait helps), and
 * `released` says a full concurrency limit is among the reasons, which a release may cure at any moment.
 */
function earliest(decision: Decision): { exactMs: number; released: boolean } {
  // A block ends when it ends, whatever is released meanwhile.
  if (decision.blocked) return { exactMs: decision.retryAfterMs ?? -1, released: false };
  let exactMs = 0;
  // Stryker disable next-line BooleanLiteral: a denied request has a denying policy that sets one or the other
  let released = false;
  for (const { allowed, retryAfterMs, policy } of decision.policies) {
    // Stryker disable next-line ConditionalExpression: an admitting policy's retry is 0, which changes neither
    if (allowed) continue;
    // Stryker disable next-line EqualityOperator: a denial's retry is never 0 (at least 1 ms, or -1)
    if (retryAfterMs < 0) return { exactMs: -1, released };
    if (policy.retryHintMs !== undefined) released = true;
    else exactMs = Math.max(exactMs, retryAfterMs);
  }
  return { exactMs, released };
}
