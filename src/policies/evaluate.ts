// Evaluates a request against several policies at once, all or nothing: a denial by one spends from none.
import type { AnyPolicy, PolicyResult, Transition } from './policy.js';

/**
 * - `'consume'` spends `cost` units if every policy allows it; `'peek'` answers the same and writes nothing.
 * - `'refund'` gives back `cost` units spent at `spentAtMs` to every policy, and frees `lease`'s concurrency slot.
 * - `'block'` locks the identifier out for `cost` ms (a limiter with a lockout only).
 */
export type StoreAction = 'consume' | 'peek' | 'refund' | 'block';

/** What a request asks of one identifier's states. */
export interface Operation {
  readonly action: StoreAction;
  /** Units, 0 or more; for `'block'`, the block's length in ms. */
  readonly cost: number;
  /** The holder a concurrency slot is taken for (`consume`) or freed from (`refund`); absent or '' for none. */
  readonly lease?: string;
  /**
   * `consume` only: how far ahead an admission may be booked when the policies allow it (all reservable), so that
   * a waiting caller keeps its place in line. 0 or absent: now or not at all.
   */
  readonly maxDelayMs?: number;
  /**
   * `consume` only: asked by a caller of `wait`, whose denial, like any waiting caller's, starts no lockout, even
   * once it may no longer be booked ahead (`maxDelayMs` 0, its deadline reached).
   */
  readonly waiting?: boolean;
  /**
   * `refund` only: when the units given back were spent, on the store's clock (the consuming decision's `nowMs`),
   * so that each policy gives them back only where they still count. Absent: now.
   */
  readonly spentAtMs?: number;
  /**
   * `refund` only, with `spentAtMs`: each policy's `resetMs` in the consuming decision, index-aligned with the
   * policies (a token bucket learns from it when the units refill). Absent, or shorter: each policy missing assumes
   * the least it can be sure of.
   */
  readonly spentResetMs?: readonly number[];
}

export interface Evaluation {
  readonly allowed: boolean;
  /** For `refund` and `block`, the policies' views before the change. */
  readonly results: readonly PolicyResult[];
  /**
   * What to store, index-aligned with the policies (a `next` of `undefined`: nothing for that one), or empty when
   * nothing changes; TTLs are counted from `nowMs`.
   */
  readonly writes: readonly StateWrite[];
  /** After how long the admission holds: more than 0 only for a booked one (the results are as of then). */
  readonly delayMs: number;
}

/** A transition is one as it is: its `next` and `ttlMs`. */
export type StateWrite = Pick<Transition<unknown>, 'next' | 'ttlMs'>;

const NO_WRITES: Evaluation['writes'] = Object.freeze([]);
const NOTHING: StateWrite = Object.freeze({ next: undefined, ttlMs: 0 });

/**
 * The general path and its short ones. A decision is this function in memory and its twin, the engine's
 * `evaluate`, in Redis. A consume or a peek of one policy alone, the common request, takes a short path in each
 * engine, which must decide exactly as this does:
 * 1. `MemoryStore.decideAlone`: the policy's own `evaluate`, no request or response object made (a limiter's
 *    consume or peek of a lone policy with no lease and no booking);
 * 2. the engine's `decide`, its `per == 1` branch: the twin's `decide` straight from the key, unless a denial may
 *    be booked ahead;
 * 3. the engine's narrow reply (`answer`, read back by `decodeReply` in the call format): four figures per decision,
 *    the admission's delay in place of its retry;
 * 4. this function on one policy, which the booking and the lease still take.
 * The differential suite (test/contract/differential.ts) takes each: its traces of one policy consume, peek, book
 * and lease through both engines' limiters, and its traces of two policies take the general paths.
 *
 * The TypeScript twin of the Redis script's main loop. When any policy denies, the policies that would have
 * admitted the request report their unspent view (cost 0), because nothing was spent from them.
 * Plain loops rather than map/every: this runs on every request, and most limiters have one policy.
 */
export function evaluatePolicies(
  policies: readonly AnyPolicy[],
  states: readonly unknown[],
  nowMs: number,
  operation: Operation,
): Evaluation {
  const { action, cost } = operation;
  const lease = operation.lease ?? '';
  if (action === 'refund' || action === 'block') return change(policies, states, nowMs, operation, lease);
  const transitions = transitionsAt(policies, states, nowMs, cost, lease);
  const allowed = allAllowed(transitions);
  const maxDelayMs = action === 'consume' ? (operation.maxDelayMs ?? 0) : 0;
  // With no delay allowed, book() finds nothing: every denial's wait is at least 1 ms.
  if (!allowed) {
    const booked = book(policies, states, nowMs, cost, lease, transitions, maxDelayMs);
    if (booked !== undefined) return booked;
  }
  const results: PolicyResult[] = [];
  for (let i = 0; i < policies.length; i++) {
    const { result } = transitions[i] as Transition<unknown>;
    results.push(
      allowed || !result.allowed
        ? result
        : (policies[i] as AnyPolicy).evaluate(states[i], nowMs, 0, lease).result,
    );
  }
  if (!allowed) {
    // A waiting caller is told when to come back; only a plain request denied here starts a lockout.
    return action === 'consume' && maxDelayMs === 0 && operation.waiting !== true
      ? onDenial(policies, states, nowMs, results)
      : { allowed, results, writes: NO_WRITES, delayMs: 0 };
  }
  // Spending nothing changes nothing worth a write (and must not open a window).
  if (action === 'peek' || cost === 0) return { allowed, results, writes: NO_WRITES, delayMs: 0 };
  return { allowed, results, writes: transitions, delayMs: 0 };
}

function allAllowed(transitions: readonly Transition<unknown>[]): boolean {
  for (const { result } of transitions) if (!result.allowed) return false;
  return true;
}

function transitionsAt(
  policies: readonly AnyPolicy[],
  states: readonly unknown[],
  atMs: number,
  cost: number,
  lease: string,
): Transition<unknown>[] {
  const transitions: Transition<unknown>[] = [];
  for (let i = 0; i < policies.length; i++)
    transitions.push((policies[i] as AnyPolicy).evaluate(states[i], atMs, cost, lease));
  return transitions;
}

/**
 * A denied request that may wait: admitted at the instant every policy would admit it, booked now, so later
 * callers queue behind it. Only reservable policies can be booked ahead; the others are asked again later.
 */
function book(
  policies: readonly AnyPolicy[],
  states: readonly unknown[],
  nowMs: number,
  cost: number,
  lease: string,
  transitions: readonly Transition<unknown>[],
  maxDelayMs: number,
): Evaluation | undefined {
  let delayMs = 0;
  for (let i = 0; i < policies.length; i++) {
    const { retryAfterMs } = (transitions[i] as Transition<unknown>).result;
    // A policy that no wait helps is found still denying at the booked instant, below.
    if (!(policies[i] as AnyPolicy).reservable) return undefined;
    delayMs = Math.max(delayMs, retryAfterMs);
  }
  if (delayMs > maxDelayMs) return undefined;
  const later = transitionsAt(policies, states, nowMs + delayMs, cost, lease);
  if (!allAllowed(later)) return undefined;
  const writes = later.map(({ next, ttlMs }) => ({ next, ttlMs: ttlMs < 0 ? ttlMs : ttlMs + delayMs }));
  return { allowed: true, results: later.map((t) => t.result), writes, delayMs };
}

/** A lockout that was open starts its block on a denial: its figures become the block's, and it is written. */
function onDenial(
  policies: readonly AnyPolicy[],
  states: readonly unknown[],
  nowMs: number,
  results: PolicyResult[],
): Evaluation {
  let writes: StateWrite[] | undefined;
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i] as AnyPolicy;
    if (policy.onDenial === undefined || !(results[i] as PolicyResult).allowed) continue;
    const transition = policy.onDenial(states[i], nowMs);
    results[i] = transition.result;
    writes ??= new Array<StateWrite>(policies.length).fill(NOTHING);
    writes[i] = transition;
  }
  return { allowed: false, results, writes: writes ?? NO_WRITES, delayMs: 0 };
}

/** A refund or a block: each policy's change, and its view before it. */
function change(
  policies: readonly AnyPolicy[],
  states: readonly unknown[],
  nowMs: number,
  { action, cost, spentAtMs = nowMs, spentResetMs }: Operation,
  lease: string,
): Evaluation {
  const results: PolicyResult[] = [];
  const writes: StateWrite[] = [];
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i] as AnyPolicy;
    results.push(policy.evaluate(states[i], nowMs, 0).result);
    const write =
      action === 'refund'
        ? policy.refund(states[i], nowMs, cost, lease, spentAtMs, spentResetMs?.[i])
        : policy.block?.(states[i], nowMs, cost);
    writes.push(write ?? NOTHING);
  }
  return { allowed: true, results, writes, delayMs: 0 };
}
