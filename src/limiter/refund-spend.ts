// What a refund gives back: an admission the limiter recorded (once, at most what it spent), or a trusted caller's units.

import { argumentError } from '../core/errors.js';
import type { Decision } from '../decision/decision.js';

export interface RefundOptions {
  /** Units to give back. Default: what `spent` spent, else the limiter's cost. */
  readonly cost?: number;
  /**
   * The admission that spent the units: the very object `consume`, `consumeSync` or `wait` answered. It is
   * refunded once, for at most what it spent, by the limiter and for the identifier that made it; a copy or an
   * edited decision is refused. Each policy then gives the units back only where they still count: a window only
   * to the window that counted them (a sliding window counter's current or previous one), a log only its entries
   * from then or before, a token bucket only the tokens its refill has not given back yet.
   */
  readonly spent?: Decision;
  /**
   * Instead of `spent`, when only the time is kept: the consuming decision's `nowMs`, on the store's clock (Redis's
   * on a RedisStore, not this process's). A token bucket then assumes it was full at the spend, so a refund after
   * some of the refill gives back less than `spent` would (never more).
   */
  readonly spentAtMs?: number;
}

/** A refund as the store request carries it: the units, when they were spent, and each policy's resetMs then. */
export interface RefundChange {
  readonly units: number;
  readonly spentAtMs?: number;
  readonly spentResetMs?: readonly number[];
  /** Undoes the mark that the admission was refunded, for a refund the store did not apply. */
  readonly undo?: () => void;
}

/** Hands back the object it is given, so that a subclass can add private fields to an object made elsewhere. */
class Target {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the point is to extend an existing object, not a new one
    return target;
  }
}

/**
 * What an admission spent, in private fields of the decision itself: a copy of it (spread, `structuredClone`,
 * JSON) or a look-alike has none, and no code outside this class can set them. Nothing enumerable or comparable
 * changes, nothing is allocated but a multi-policy admission's list of resets, and, unlike a WeakMap of decisions,
 * nothing more for the collector to trace (a WeakMap cost each admission many times what the field does).
 */
class Recorded extends Target {
  /** The limiter that made it (its own token). */
  readonly #owner: object;
  readonly #identifier: string;
  readonly #cost: number;
  readonly #nowMs: number;
  /** Each policy's `resetMs` in the admission: one number for a policy alone, the common case. */
  readonly #resetMs: number | readonly number[];
  #refunded = false;

  constructor(decision: Decision, owner: object, identifier: string, cost: number) {
    super(decision);
    this.#owner = owner;
    this.#identifier = identifier;
    this.#cost = cost;
    this.#nowMs = decision.nowMs;
    const { policies } = decision;
    // A policy alone keeps its figure without a list: an allocation per admission saved on the common path.
    // Stryker disable next-line ConditionalExpression: the same figures either way
    this.#resetMs = policies.length === 1 ? decision.resetMs : policies.map((policy) => policy.resetMs);
  }

  /** The refund of `spent`, checked against its record, which is marked refunded. */
  static refund(spent: Decision, owner: object, identifier: string, cost: number | undefined): RefundChange {
    if (typeof spent !== 'object' || spent === null || !(#owner in spent) || spent.#owner !== owner)
      throw argumentError(
        '`spent` must be an admission this limiter returned (the object its consume or wait answered, not a copy)',
      );
    const record = spent as unknown as Recorded;
    if (record.#identifier !== identifier)
      throw argumentError(`\`spent\` was spent by another identifier than ${JSON.stringify(identifier)}`);
    const resetMs = typeof record.#resetMs === 'number' ? [record.#resetMs] : record.#resetMs;
    if (edited(spent, record.#nowMs, resetMs))
      throw argumentError('`spent` was changed after the limiter returned it');
    if (record.#refunded) throw argumentError('`spent` was refunded already: a spend is given back once');
    const units = cost ?? record.#cost;
    if (typeof units === 'number' && units > record.#cost)
      throw argumentError(`\`cost\` (${units}) must not exceed what \`spent\` spent (${record.#cost})`);
    // At once, so that two refunds of it racing each other give back once.
    record.#refunded = true;
    const undo = () => {
      record.#refunded = false;
    };
    return { units, spentAtMs: record.#nowMs, spentResetMs: resetMs, undo };
  }
}

/** Records on an admission what it spent, so that a refund naming it can be checked; returns the admission. */
export function recordSpend(decision: Decision, owner: object, identifier: string, cost: number): Decision {
  new Recorded(decision, owner, identifier, cost);
  return decision;
}

/**
 * The refund `options` ask of `owner`'s store for `identifier`, checked: a named admission must be one `owner`
 * made for `identifier` and returned as it is, not refunded yet, and gives back at most what it spent.
 */
export function refundOf(
  owner: object,
  identifier: string,
  options: RefundOptions | undefined,
  defaultCost: number,
): RefundChange {
  const { spent, spentAtMs, cost } = options ?? {};
  if (spent === undefined) return { units: cost ?? defaultCost, ...instant(spentAtMs) };
  if (spentAtMs !== undefined) throw argumentError('`spent` and `spentAtMs` cannot be combined');
  return Recorded.refund(spent, owner, identifier, cost);
}

/** The figures a refund reads, changed since the limiter recorded them (a denial made an admission, a moved clock). */
function edited(spent: Decision, nowMs: number, resetMs: readonly number[]): boolean {
  if (spent.allowed !== true || spent.nowMs !== nowMs || spent.policies?.length !== resetMs.length)
    return true;
  return spent.policies.some((policy, i) => policy?.resetMs !== resetMs[i]);
}

function instant(spentAtMs: number | undefined): Pick<RefundChange, 'spentAtMs'> {
  if (spentAtMs === undefined) return {};
  if (!Number.isSafeInteger(spentAtMs) || spentAtMs < 0)
    throw argumentError(`\`spentAtMs\` must be a whole number of epoch ms (received ${spentAtMs})`);
  return { spentAtMs };
}
