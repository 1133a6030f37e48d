// A local memory of denials, so a client flooding past its limit costs no Redis round trip until its retry time.
import type { AnyPolicy } from '../../policies/policy.js';
import type { StoreResponse } from '../store.js';

interface Denial {
  readonly response: StoreResponse;
  readonly cost: number;
  /** The limits it was denied under: a limiter's own array, the same object on each of its requests. */
  readonly policies: readonly AnyPolicy[];
  /** Local monotonic ms when the denial was made and when waiting could first cure it. */
  readonly at: number;
  readonly until: number;
}

/**
 * A denial of cost `c` with retry `r` stays true for requests of cost `c` until `r` has passed: time only adds
 * capacity, and other instances can only spend more. So answering those locally never rejects a request Redis
 * would have allowed; the one exception is a reset made by another process, seen at `until` at the latest.
 * The wait told is Redis's own, unless other instances spent from the same bucket meanwhile (then the real
 * wait is longer, and the client's retry is simply denied again). Any other cost fits sooner or waits longer,
 * so it goes to Redis, and this process's own admitted requests drop the entry (`delete`). So do other limits on
 * the same buckets (a configuration reloaded into new limiters, keeping the counts): a raised limit admits at once.
 * Denials that no wait cures (-1) are not cached: they are rare and change only through configuration.
 */
export class DenyCache {
  readonly #entries = new Map<string, Denial>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(maxEntries: number, now: () => number = () => performance.now()) {
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  /** The cached denial for `key` at this cost under these limits, re-aged to now; undefined when Redis must decide. */
  get(key: string, cost: number, policies: readonly AnyPolicy[]): StoreResponse | undefined {
    const denial = this.#entries.get(key);
    if (denial === undefined) return undefined;
    const now = this.#now();
    if (now >= denial.until) {
      this.#entries.delete(key);
      return undefined;
    }
    // Another cost fits sooner or waits longer; a clock that went back (an injected one) makes waits longer.
    if (cost !== denial.cost || policies !== denial.policies || now < denial.at) return undefined;
    const elapsed = Math.ceil(now - denial.at);
    // Field by field: a spread (`{ ...result, ... }`) is slow on Node 20, and this is the path a flood takes.
    return {
      allowed: false,
      nowMs: denial.response.nowMs + elapsed,
      results: denial.response.results.map(({ allowed, remaining, resetMs, retryAfterMs }) => ({
        allowed,
        remaining,
        resetMs: resetMs < 0 ? -1 : Math.max(0, resetMs - elapsed),
        retryAfterMs: retryAfterMs <= 0 ? retryAfterMs : Math.max(1, retryAfterMs - elapsed),
      })),
    };
  }

  /** Remembers a denial under `policies` whose binding wait is `retryAfterMs`. */
  set(
    key: string,
    cost: number,
    policies: readonly AnyPolicy[],
    response: StoreResponse,
    retryAfterMs: number,
  ): void {
    if (retryAfterMs <= 0) return;
    if (this.#entries.size >= this.#maxEntries) this.#evict();
    const at = this.#now();
    this.#entries.set(key, { response, cost, policies, at, until: at + retryAfterMs });
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Forgets every denial whose key starts with `prefix` (all of one identifier's keys): a scan, for rare resets. */
  deleteStartingWith(prefix: string): void {
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
  }

  /** Drops expired entries, and if that is not enough the oldest half: the cache is an optimisation only. */
  #evict(): void {
    const now = this.#now();
    for (const [key, denial] of this.#entries) if (now >= denial.until) this.#entries.delete(key);
    let excess = this.#entries.size - Math.floor(this.#maxEntries / 2);
    for (const key of this.#entries.keys()) {
      if (excess-- <= 0) break;
      this.#entries.delete(key);
    }
  }
}
