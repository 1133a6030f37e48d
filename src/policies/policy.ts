// The contract every policy meets: a pure, integer-exact state transition, with a Lua twin of the same steps.
import { configError } from '../core/errors.js';

/**
 * A policy's kind names its transition and its state's form: 'token-bucket', 'fixed-window', 'sliding-window',
 * 'sliding-window-counter', 'concurrency', 'lockout', or any kind a policy of its own brings. Open: nothing outside
 * a policy's own file asks which kind it is; what the rest of the library needs to know, the policy says itself.
 */
export type PolicyKind = string;

/** What the simulator charts as a policy's level: tokens left, requests in flight, or the window's count. */
export type PolicyLevel = 'tokens' | 'in-flight' | 'window-count';

/** What one evaluation tells the caller. Times are whole milliseconds from the evaluation's `now`. */
export interface PolicyResult {
  readonly allowed: boolean;
  /** Whole units left after this request (before it, when it was denied). */
  readonly remaining: number;
  /** Until the policy holds no trace of past requests (full bucket, empty window); -1 when it never will. */
  readonly resetMs: number;
  /** Until a request of this cost could pass: 0 when allowed, -1 when waiting cannot help. */
  readonly retryAfterMs: number;
}

/** A state to store, and until it is at rest (equivalent to no state at all); -1 when it never is. */
export interface Write<S> {
  readonly next: S;
  readonly ttlMs: number;
}

export interface Transition<S> {
  readonly result: PolicyResult;
  /** The state to store; `undefined` when there is nothing to write (always on a denial, which so costs no write). */
  readonly next: S | undefined;
  /** Until `next` is at rest (equivalent to no state at all); -1 when it never is. */
  readonly ttlMs: number;
}

/**
 * A policy is parameters plus pure transitions: `evaluate` spends (`(state, now, cost) -> { result, next }`),
 * `refund` gives back. `state` is `undefined` for a client never seen (or whose state expired): that must mean the
 * same thing. `args` are its integer parameters, in the order the Lua twin reads them from its parameter list.
 */
export interface Policy<S = unknown> {
  readonly kind: PolicyKind;
  /** Names the policy in the `RateLimit-Policy` header and in multi-policy keys. */
  readonly name: string;
  /** The quota advertised: capacity or requests per window. */
  readonly limit: number;
  /** The window advertised, in ms (for a token bucket: the time to refill from empty; 0 when it never refills). */
  readonly windowMs: number;
  /**
   * The longest any state of this policy takes to come to rest after a write (a full bucket, an ended window), in
   * ms; -1 when a state may never rest (a bucket that never refills). A store must keep a bucket at least this
   * long, or forgetting it would hand the client quota it has not earned.
   */
  readonly retentionMs: number;
  /** Its integer parameters, any number of them: what the Redis engine hands its Lua twin, and part of its identity. */
  readonly args: readonly number[];
  /**
   * The Lua twin, a Lua table the Redis engine runs, with the integer prelude (`floor_div`, `ceil_div`) and the state
   * helpers (`read_integer`, `read_fields`, `set_state`, `forget`, and `foreign(key, err)` for what a read with
   * `redis.pcall` failed with: a key of another type is forgotten, any other error raised) in scope. `p` holds `args`.
   * - `load(key)`: the state, nil for none; `save(key, next, ttl, prev)`: writes it (`ttl` nil: keep the key's).
   * - `decide(state, now_ms, cost, p, lease)`: allowed (1 or 0), remaining, resetMs, retryAfterMs, the state to
   *   write (nil: none) and until it is at rest, as `evaluate` answers them.
   * - `refund(state, now_ms, cost, p, lease, spent_at, spent_reset)`: the state to write and until it is at rest,
   *   or nil, as `refund` answers them.
   * - Optional: `at_rest(next, p)` (when a state comes to rest, so a write may keep the key's TTL), `reservable`,
   *   and a lockout's `block(state, now_ms, ms)` and `on_denial(state, now_ms, p)`.
   * The engine carries every built-in twin, and takes the twin of any other kind a store's limiters bring: one twin
   * per kind.
   */
  readonly lua: string;
  /**
   * How MemoryStore packs a state: 1 for a number, n for a tuple of n numbers, 0 for an object kept as given. Packed
   * numbers cost 8 bytes each and no object per bucket.
   */
  readonly stateWidth: number;
  /**
   * Whether a request holds a slot until it is released (a concurrency limit): such a policy counts requests, not
   * units (a request of any cost takes one slot), and its slot is given back when the request ends.
   */
  readonly leased: boolean;
  /** The unit its quota counts when it has no window (`qu` in the `RateLimit-Policy` header), e.g. 'concurrent-requests'. */
  readonly quotaUnit?: string;
  /** What the simulator charts as its level. */
  readonly level: PolicyLevel;
  /**
   * A state that stays exact when evaluated at a later instant than now, so an admission can be booked ahead (a
   * reservation, for `wait`): a token bucket's is a time, while a window's count would open a window early.
   */
  readonly reservable: boolean;
  /**
   * Only a policy whose capacity comes back whenever a holder lets go, at any moment, has one (a concurrency limit,
   * whose slot is released when its request ends): its denial advises a retry after at most this long, rather than
   * when the last lease expires, and a waiter asks again on every release instead of sleeping until then.
   */
  readonly retryHintMs?: number;
  /** `lease` names the holder of a concurrency slot taken by this request ('' or absent: none). */
  evaluate(state: S | undefined, nowMs: number, cost: number, lease?: string): Transition<S>;
  /**
   * Gives back `cost` units spent at `spentAtMs` (and frees `lease`'s concurrency slot): only to the window that
   * counted them, and never past a full quota, so a late refund hands back nothing a later window or the refill has
   * given already. `spentResetMs` is this policy's `resetMs` in the spending decision, when known (a token bucket
   * learns from it when those units refill). `undefined` when that changes nothing.
   */
  refund(
    state: S | undefined,
    nowMs: number,
    cost: number,
    lease: string,
    spentAtMs: number,
    spentResetMs?: number,
  ): Write<S> | undefined;
  /**
   * Until `state` no longer holds a promise made to its client, in ms from `nowMs`: a concurrency lease, a lockout's
   * block, a token bucket's admission booked ahead by `wait` (more owed than a full bucket); 0 when it holds none.
   * Absent where no state ever holds one (the windows). Only a lease, a booking or a block starts one: a consume with
   * neither a lease nor a booking never does (the memory store asks nothing then). A store may forget a bucket that
   * holds nothing at the cost of quota handed back early; forgetting a promise breaks it, so the memory store evicts
   * those last. It is a store's choice of what to drop, not part of a decision, so it has no Lua twin.
   */
  heldMs?(state: S, nowMs: number): number;
  /** Only a lockout has one: the state that denies everything for `ms` from now (never shortening a longer one). */
  block?(state: S | undefined, nowMs: number, ms: number): Write<S> | undefined;
  /** Only a lockout has one: its transition when the other policies denied a request (it starts its block). */
  onDenial?(state: S | undefined, nowMs: number): Transition<S>;
  /**
   * The same policy with its quota and rate multiplied by `share` (0 < share <= 1), keeping at least one unit
   * where the original had any: what one of N instances enforces on its own while the shared store is down.
   */
  scale(share: number): Policy<S>;
}

/** What a name or a kind may be: spelled into keys, headers and the Redis engine's code, it needs no quoting. */
export const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const NAME_RULE = '1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"';
const LEVELS: readonly PolicyLevel[] = ['tokens', 'in-flight', 'window-count'];
const isCount = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;

/** Each part a policy must say of itself, as a refusal names it, and whether `policy` says it. */
const DESCRIBED: readonly (readonly [part: string, says: (policy: AnyPolicy) => boolean])[] = [
  [`\`kind\` of ${NAME_RULE}`, (p) => typeof p.kind === 'string' && NAME.test(p.kind)],
  [`\`name\` of ${NAME_RULE}`, (p) => typeof p.name === 'string' && NAME.test(p.name)],
  ['`limit` and `windowMs`, whole numbers of 0 or more', (p) => isCount(p.limit) && isCount(p.windowMs)],
  [
    '`retentionMs`, whole ms (-1: never at rest)',
    (p) => Number.isSafeInteger(p.retentionMs) && p.retentionMs >= -1,
  ],
  [
    '`args`, an array of integers',
    (p) => Array.isArray(p.args) && p.args.every((a) => Number.isSafeInteger(a)),
  ],
  ['`lua`, its Lua twin', (p) => typeof p.lua === 'string'],
  ['`stateWidth`, an integer of 0 or more', (p) => isCount(p.stateWidth)],
  ['`leased` and `reservable`', (p) => typeof p.leased === 'boolean' && typeof p.reservable === 'boolean'],
  [`\`level\`, one of ${LEVELS.join(', ')}`, (p) => LEVELS.includes(p.level)],
  [`\`quotaUnit\` of ${NAME_RULE}`, (p) => p.quotaUnit === undefined || NAME.test(p.quotaUnit)],
  [
    '`evaluate()`, `refund()` and `scale()`',
    (p) => [p.evaluate, p.refund, p.scale].every((f) => typeof f === 'function'),
  ],
];

/**
 * What a policy of its own (one not made by a factory of this library) fails to say of itself, or `undefined` when
 * it is complete: both engines, the limiter and the headers read each of these, so a missing one is refused at
 * wire-up rather than on the first request.
 */
export function missingDescription(policy: AnyPolicy): string | undefined {
  return DESCRIBED.find(([, says]) => !says(policy))?.[0];
}

/** A policy of any state type, as stores and limiters hold them. */
// biome-ignore lint/suspicious/noExplicitAny: the state type is private to each policy.
export type AnyPolicy = Policy<any>;

/** Options every policy factory accepts. */
export interface PolicyNameOption {
  /** Defaults to the policy's kind, e.g. `'token-bucket'`. */
  readonly name?: string;
}

export function policyName(options: PolicyNameOption, kind: PolicyKind): string {
  const name = options.name ?? kind;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw configError('name', `must be ${NAME_RULE}`, name);
  }
  return name;
}

/**
 * A result as its policy advises the client: a concurrency limit's state knows only when its leases expire, while a
 * slot frees whenever a request ends, so its denial's retry is told at most its `retryHintMs`. Both engines return
 * the state's own figure; the limiter and the simulation tell this one.
 */
export function advised(result: PolicyResult, { retryHintMs }: Policy): PolicyResult {
  // Stryker disable next-line EqualityOperator: a retry equal to the hint is told the same either way
  if (retryHintMs === undefined || result.retryAfterMs <= retryHintMs) return result;
  return {
    allowed: result.allowed,
    remaining: result.remaining,
    resetMs: result.resetMs,
    retryAfterMs: retryHintMs,
  };
}

/** A quota times a share, rounded down but never from some to none. */
export function scaledQuota(quota: number, share: number): number {
  return quota === 0 ? 0 : Math.max(1, Math.floor(quota * share));
}
