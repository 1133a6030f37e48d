// The embedded default store: the TypeScript transitions over bounded maps of packed buckets, one per scope and policy.

import { evaluatePolicies, type StateWrite } from '../../policies/evaluate.js';
import type { AnyPolicy, PolicyKind, PolicyResult } from '../../policies/policy.js';
import { bucketKey, memberOf, parseBucketKey } from '../key.js';
import type {
  EvictionState,
  RetentionCap,
  Store,
  StoreRequest,
  StoreResponse,
  StoreStats,
} from '../store.js';
import { BucketSlots, tooFewBuckets } from './bucket-pool.js';
import { EvictionQueue } from './eviction-queue.js';
import { checkBucketRoom, type MemoryStoreOptions, memoryStoreSettings } from './options.js';
import { checkRetentionCap, keptUntil } from './retention.js';
import { ALONE, type Table, TableNumbers, tableIn } from './tables.js';

export type { MemoryStoreOptions } from './options.js';

/** A request of one bucket has no other to keep from eviction. */
const NOTHING_KEPT: readonly number[] = [];

/**
 * The in-process store, the default: buckets packed in typed arrays, at most `maxBuckets`, answered at once.
 * @example
 * const store = new MemoryStore({ maxBuckets: 50_000 }); // one app's own; without `store`, limiters share one
 * const limiter = createLimiter({ policy: tokenBucket({ capacity: 10, refillPerSecond: 1 }), store });
 */
export class MemoryStore implements Store {
  /** Every answer is synchronous, so limiters on this store offer `consumeSync`. */
  readonly synchronous = true;
  /** Buckets dropped to stay within `maxBuckets`, by what they held (see `EvictionState`). */
  readonly metrics = {
    evictions: { 'at-rest': 0, live: 0, held: 0 } satisfies Record<EvictionState, number>,
  };
  /** scope -> member (or ALONE) -> table. */
  readonly #scopes = new Map<string, Map<string, Table>>();
  #size = 0;
  /** Each bucket's state and times, and its table's number and identifier, so that an evicted one leaves its table. */
  readonly #slots: BucketSlots;
  readonly #tables = new TableNumbers<Table>();
  readonly #queue: EvictionQueue;
  readonly #maxBuckets: number;
  readonly #inactiveAfterMs: number | undefined;
  readonly retentionCap?: RetentionCap;
  readonly #clock: () => number;
  readonly #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: MemoryStoreOptions = {}) {
    const settings = memoryStoreSettings(options);
    this.#maxBuckets = settings.maxBuckets;
    this.#slots = new BucketSlots(this.#maxBuckets);
    // A hold's end is read from the state by its table's policy, when the queue needs it.
    const holdEnd = (slot: number, nowMs: number) =>
      this.#slots.heldUntil(slot, this.#tables.policy(this.#slots.tableOf(slot)), nowMs);
    this.#queue = new EvictionQueue(this.#slots, holdEnd, this.#maxBuckets);
    this.#inactiveAfterMs = settings.inactiveAfterMs;
    if (settings.inactiveAfterMs !== undefined)
      this.retentionCap = { option: 'inactiveAfterMs', ms: settings.inactiveAfterMs };
    this.#clock = settings.clock;
    if (settings.cleanupIntervalMs !== undefined) {
      this.#timer = setInterval(() => this.sweep(), settings.cleanupIntervalMs);
      this.#timer.unref();
    }
  }

  /** Buckets currently held, including expired ones the sweep has not dropped yet. */
  get size(): number {
    return this.#size;
  }

  /** Its evictions by state, for `tollgate/metrics` and `tollgate/otel`. */
  stats(): StoreStats {
    return { evictions: { ...this.metrics.evictions } };
  }

  evaluate(request: StoreRequest): StoreResponse {
    const nowMs = this.#clock();
    const { scope, id, policies } = request;
    const tables = this.#scopes.get(scope);
    // A peek writes nothing, not even the removal of another kind's bucket.
    const writes = request.action !== 'peek';
    const slots: (number | undefined)[] = [];
    const states: unknown[] = [];
    for (let i = 0; i < policies.length; i++) {
      const table = tables?.get(memberOf(policies, i) ?? ALONE);
      const slot = table && this.#find(table, id, (policies[i] as AnyPolicy).kind, writes);
      slots.push(slot);
      states.push(slot === undefined ? undefined : this.#slots.read(slot));
    }
    const evaluation = evaluatePolicies(policies, states, nowMs, request);
    const { allowed, results, delayMs } = evaluation;
    // As in decideAlone: an admission with no lease and no booking starts no hold (a denial may start a lockout).
    const plain = allowed && delayMs === 0 && request.action === 'consume' && !request.lease;
    for (let i = 0; i < evaluation.writes.length; i++) {
      const write = evaluation.writes[i] as StateWrite;
      if (write.next === undefined) continue;
      const member = memberOf(policies, i) ?? ALONE;
      const policy = policies[i] as AnyPolicy;
      // Kept out of reach of the eviction that makes room for this request's next bucket.
      slots[i] = this.#write(scope, member, id, policy, slots[i], write, nowMs, slots, plain);
    }
    return delayMs === 0
      ? { allowed, results, nowMs }
      : { allowed, results, nowMs: nowMs + delayMs, delayMs };
  }

  /**
   * The first of the lone-policy short paths (listed at `evaluatePolicies`): `evaluate` for a consume or a peek of
   * one policy alone (no lease, no booking), with no request, response or array made; `answer` turns the result and
   * the store's clock into the caller's. The same writes as `evaluate` (test/limiter/limiter-sync.test.ts).
   */
  decideAlone<T>(
    scope: string,
    id: string,
    policy: AnyPolicy,
    action: 'consume' | 'peek',
    cost: number,
    answer: (result: PolicyResult, nowMs: number) => T,
  ): T {
    const nowMs = this.#clock();
    const table = this.#scopes.get(scope)?.get(ALONE);
    const writes = action !== 'peek';
    const slot = table && this.#find(table, id, policy.kind, writes);
    const transition = policy.evaluate(
      slot === undefined ? undefined : this.#slots.read(slot),
      nowMs,
      cost,
      '',
    );
    // As evaluatePolicies: spending nothing writes nothing, and a denial of a policy alone writes nothing either.
    if (writes && cost > 0 && transition.result.allowed && transition.next !== undefined) {
      const expiresAt = keptUntil(nowMs, transition.ttlMs, this.#inactiveAfterMs);
      // A consume with no lease and no booking starts no hold (`Policy.heldMs`) and moves no rest earlier (only a
      // clock gone back under `inactiveAfterMs` can, by that step): the eviction queue needs nothing.
      if (slot === undefined)
        this.#insert(scope, ALONE, id, policy, transition.next, expiresAt, nowMs, nowMs, NOTHING_KEPT);
      else this.#slots.write(slot, transition.next, expiresAt);
    }
    return answer(transition.result, nowMs);
  }

  /** Refuses a limiter whose buckets it could not all hold (too many, a kind too many), or would drop early. */
  checkPolicies(policies: readonly AnyPolicy[]): void {
    checkBucketRoom(policies.length, this.#maxBuckets);
    this.#slots.admit(policies);
    checkRetentionCap('inactiveAfterMs', this.#inactiveAfterMs, { ms: 1, name: 'ms' }, policies);
  }

  reset(keys: readonly string[]): void {
    for (const key of keys) {
      const parsed = parseBucketKey(key);
      if (parsed === undefined) continue;
      const table = this.#scopes.get(parsed.scope)?.get(parsed.member ?? ALONE);
      if (table === undefined) continue;
      const slot = table.get(parsed.identifier);
      if (slot !== undefined) this.#remove(table, parsed.identifier, slot);
    }
  }

  /** Drops every bucket that is at rest; returns how many. */
  sweep(): number {
    const nowMs = this.#clock();
    let dropped = 0;
    for (const [scope, tables] of this.#scopes) {
      for (const [member, table] of tables) {
        for (const [id, slot] of table) {
          if (this.#slots.expiresAt(slot) <= nowMs) {
            this.#remove(table, id, slot);
            dropped++;
          }
        }
        // Scopes come and go with limiters (tiers, tests): an empty table is not kept for ever.
        if (table.size === 0) {
          tables.delete(member);
          this.#tables.drop(table);
        }
      }
      if (tables.size === 0) this.#scopes.delete(scope);
    }
    return dropped;
  }

  /** Every bucket key not yet at rest, for admin tooling. */
  async *keys(): AsyncIterable<string> {
    const nowMs = this.#clock();
    for (const [scope, tables] of this.#scopes) {
      for (const [member, table] of tables) {
        for (const [id, slot] of table) {
          if (this.#slots.expiresAt(slot) > nowMs)
            yield bucketKey(scope, id, member === ALONE ? undefined : member);
        }
      }
    }
  }

  /** Forgets every bucket. */
  clear(): void {
    for (const tables of this.#scopes.values())
      for (const table of tables.values()) {
        for (const [id, slot] of table) this.#remove(table, id, slot);
        this.#tables.drop(table);
      }
    this.#scopes.clear();
  }

  close(): void {
    clearInterval(this.#timer);
    this.clear();
  }

  /**
   * The bucket's slot, if it holds one of this kind. An expired bucket is still read as it is: at rest it means
   * the same as none for a clock moving forwards, and for one that moved back it is what Redis (which keeps keys
   * past rest) would read too: only the sweep drops buckets for being at rest. Another kind's bucket (a scope
   * whose policy changed) reads as absent, and is dropped unless this is a peek, which writes nothing.
   */
  #find(table: Table, id: string, kind: PolicyKind, writes: boolean): number | undefined {
    const slot = table.get(id);
    if (slot === undefined || this.#slots.holds(slot, kind)) return slot;
    if (writes) this.#remove(table, id, slot);
    return undefined;
  }

  /** A bucket's next state in its slot or a new one, queued unless `plain` (see decideAlone); returns the slot. */
  #write(
    scope: string,
    member: string,
    id: string,
    policy: AnyPolicy,
    held: number | undefined,
    { next, ttlMs }: StateWrite,
    nowMs: number,
    keep: readonly (number | undefined)[],
    plain: boolean,
  ): number {
    const expiresAt = keptUntil(nowMs, ttlMs, this.#inactiveAfterMs);
    // A promise outlives neither the state nor the store's keeping of it.
    const heldUntil = plain ? nowMs : Math.min(nowMs + (policy.heldMs?.(next, nowMs) ?? 0), expiresAt);
    if (held === undefined)
      return this.#insert(scope, member, id, policy, next, expiresAt, heldUntil, nowMs, keep);
    const earlier = this.#slots.write(held, next, expiresAt);
    if (!plain) this.#queue.written(held, earlier, expiresAt, heldUntil, nowMs);
    return held;
  }

  /** A new bucket, written and queued, after making room without evicting any of `keep` (the request's others). */
  #insert(
    scope: string,
    member: string,
    id: string,
    policy: AnyPolicy,
    state: unknown,
    expiresAt: number,
    heldUntil: number,
    nowMs: number,
    keep: readonly (number | undefined)[],
  ): number {
    if (this.#size >= this.#maxBuckets && !this.#evict(nowMs, keep)) throw tooFewBuckets(this.#maxBuckets);
    const table = tableIn(this.#scopes, scope, member);
    // A fresh flat copy (a JSON round trip is exact for any string): an identifier sliced from a header or joined
    // from parts would otherwise keep its parent string or rope alive for as long as the bucket (measured in bench/).
    const flat = JSON.parse(JSON.stringify(id)) as string;
    const slot = this.#slots.allocate(policy, this.#tables.of(table, policy), flat);
    table.set(flat, slot);
    this.#size++;
    this.#slots.write(slot, state, expiresAt);
    this.#queue.add(slot, heldUntil, nowMs);
    return slot;
  }

  /**
   * Makes room in the eviction queue's order, counting the bucket by what it held; never one of `keep` (the
   * request's own): false when they are all the store holds (a direct request beyond `maxBuckets`).
   */
  #evict(nowMs: number, keep: readonly (number | undefined)[]): boolean {
    const slot = this.#queue.next(nowMs, keep);
    if (slot < 0) return false;
    this.metrics.evictions[this.#queue.stateOf(slot, nowMs)]++;
    this.#remove(this.#tables.table(this.#slots.tableOf(slot)), this.#slots.idOf(slot), slot);
    return true;
  }

  #remove(table: Table, id: string, slot: number): void {
    table.delete(id);
    this.#size--;
    this.#queue.remove(slot);
    this.#slots.release(slot);
  }
}
