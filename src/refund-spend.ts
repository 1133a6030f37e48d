// What a refund says of the units it gives back: how the caller names their spend, checked before the store hears it.
import type { Decision } from './decision.js';
import { TollgateError } from './errors.js';
import type { AnyPolicy } from './policies/policy.js';

export interface RefundOptions {
  /** Units to give back. Default: the limiter's cost. */
  readonly cost?: number;
  /**
   * The admission that spent the units (what `consume` or `wait` answered): each policy then gives them back only
   * where they still count: a window only to the window that counted them (a sliding window counter's current or
   * previous one), a log only its entries from then or before, a token bucket only the tokens its refill has not
   * given back yet (they refill last, when the spend's `resetMs` runs out). Default: spent now, so units spent in an
   * earlier window than the current one must name their spend, or the current window takes them.
   */
  readonly spent?: Pick<Decision, 'allowed' | 'nowMs' | 'policies'>;
  /**
   * Instead of `spent`, when only the time is kept: the consuming decision's `nowMs`, on the store's clock (Redis's
   * on a RedisStore, not this process's). A token bucket then assumes it was full at the spend, so a refund after
   * some of the refill gives back less than `spent` would (never more).
   */
  readonly spentAtMs?: number;
}

/** The spend as the store request carries it: when, and each policy's `resetMs` then. */
interface Spend {
  readonly spentAtMs?: number;
  readonly spentResetMs?: readonly number[];
}

/** What a refund says of its spend: when (whole epoch ms), and each policy's resetMs then when it names the decision. */
export function spentBy(policies: readonly AnyPolicy[], options: RefundOptions | undefined): Spend {
  const { spent, spentAtMs } = options ?? {};
  if (spent === undefined) return instant(spentAtMs);
  if (spentAtMs !== undefined) throw argumentError('`spent` and `spentAtMs` cannot be combined');
  const mine =
    spent.policies.length === policies.length && spent.policies.every((p, i) => p.policy === policies[i]);
  if (!spent.allowed || !mine)
    throw argumentError('`spent` must be an admission by this limiter (what its consume or wait answered)');
  return { ...instant(spent.nowMs), spentResetMs: spent.policies.map((p) => p.resetMs) };
}

function instant(spentAtMs: number | undefined): Pick<Spend, 'spentAtMs'> {
  if (spentAtMs === undefined) return {};
  if (!Number.isSafeInteger(spentAtMs) || spentAtMs < 0)
    throw argumentError(`\`spentAtMs\` must be a whole number of epoch ms (received ${spentAtMs})`);
  return { spentAtMs };
}

function argumentError(message: string): TollgateError {
  return new TollgateError('ERR_TOLLGATE_ARGUMENT', message);
}
