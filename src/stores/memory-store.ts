// The embedded default store: the TypeScript transitions over one bounded, least-recently-used Map.
import { type Duration, parseDuration } from '../duration.js';
import { configError } from '../errors.js';
import { evaluatePolicies } from '../policies/evaluate.js';
import type { AnyPolicy, PolicyKind } from '../policies/policy.js';
import { knownKeys, positiveInteger } from '../validate.js';
import type { Store, StoreRequest, StoreResponse } from './store.js';

export interface MemoryStoreOptions {
  /** Hard bound on tracked buckets; beyond it the least recently used is evicted. Default 100,000. */
  readonly maxClients?: number;
  /** Sweep period for expired buckets (the timer is `unref()`d). Default 10 minutes. */
  readonly cleanupIntervalMs?: Duration;
  /** Longest a bucket is kept after its last write even if not yet at rest. Default 1 hour. */
  readonly inactiveAfterMs?: Duration;
  /** Set false to sweep only when `sweep()` is called. Default true. */
  readonly autoCleanup?: boolean;
  /** Epoch milliseconds; inject one in tests. Default `Date.now`. */
  readonly clock?: () => number;
}

interface Entry {
  /** Another kind's state under the same key (a scope whose policy changed) reads as absent. */
  readonly kind: PolicyKind;
  readonly state: unknown;
  /** When the state is at rest (or too old to keep): from then on the sweep may drop it. */
  readonly expiresAt: number;
}

export interface MemoryStoreMetrics {
  /** Buckets dropped to stay within `maxClients` while still holding state. */
  evictions: number;
}

const OPTIONS = ['maxClients', 'cleanupIntervalMs', 'inactiveAfterMs', 'autoCleanup', 'clock'];

export class MemoryStore implements Store {
  readonly metrics: MemoryStoreMetrics = { evictions: 0 };
  readonly #entries = new Map<string, Entry>();
  readonly #maxClients: number;
  readonly #inactiveAfterMs: number;
  readonly #clock: () => number;
  readonly #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: MemoryStoreOptions = {}) {
    knownKeys('MemoryStore', options, OPTIONS);
    this.#maxClients = positiveInteger('maxClients', options.maxClients ?? 100_000);
    this.#inactiveAfterMs = parseDuration('inactiveAfterMs', options.inactiveAfterMs ?? 3_600_000);
    const cleanupIntervalMs = parseDuration('cleanupIntervalMs', options.cleanupIntervalMs ?? 600_000);
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw configError('clock', 'must be a function returning epoch milliseconds', options.clock);
    }
    this.#clock = options.clock ?? Date.now;
    if (options.autoCleanup !== undefined && typeof options.autoCleanup !== 'boolean') {
      throw configError('autoCleanup', 'must be a boolean', options.autoCleanup);
    }
    if (options.autoCleanup ?? true) {
      this.#timer = setInterval(() => this.sweep(), cleanupIntervalMs);
      this.#timer.unref();
    }
  }

  /** Buckets currently held, including expired ones the sweep has not dropped yet. */
  get size(): number {
    return this.#entries.size;
  }

  evaluate(request: StoreRequest): StoreResponse {
    const nowMs = this.#clock();
    const { keys, policies } = request;
    const states = keys.map((key, i) => this.#read(key, (policies[i] as AnyPolicy).kind));
    const evaluation = evaluatePolicies(policies, states, nowMs, request.cost, request.dryRun);
    for (let i = 0; i < keys.length; i++) {
      const write = evaluation.writes[i];
      if (write === undefined) continue;
      const ttlMs = write.ttlMs < 0 ? this.#inactiveAfterMs : Math.min(write.ttlMs, this.#inactiveAfterMs);
      this.#write(
        keys[i] as string,
        {
          kind: (policies[i] as AnyPolicy).kind,
          state: write.state,
          expiresAt: nowMs + ttlMs,
        },
        nowMs,
      );
    }
    return { allowed: evaluation.allowed, results: evaluation.results, nowMs };
  }

  reset(keys: readonly string[]): void {
    for (const key of keys) this.#entries.delete(key);
  }

  /** Drops every bucket that is at rest; returns how many. */
  sweep(): number {
    const nowMs = this.#clock();
    let dropped = 0;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= nowMs) {
        this.#entries.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /** Every bucket key not yet at rest, for admin tooling. */
  async *keys(): AsyncIterable<string> {
    const nowMs = this.#clock();
    for (const [key, entry] of this.#entries) if (entry.expiresAt > nowMs) yield key;
  }

  /** Forgets every bucket. */
  clear(): void {
    this.#entries.clear();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#entries.clear();
  }

  #read(key: string, kind: PolicyKind): unknown {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    // An expired entry is still read as it is: at rest it means the same as no entry for a clock moving forwards,
    // and for one that moved backwards it is exactly what Redis (which keeps keys past rest) would read too.
    // Only the sweep removes entries.
    if (entry.kind !== kind) {
      this.#entries.delete(key);
      return undefined;
    }
    // Re-inserting moves the key to the young end, so a client hammering its limit is never the one evicted.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.state;
  }

  #write(key: string, entry: Entry, nowMs: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#entries.size > this.#maxClients) {
      const [oldest, evicted] = this.#entries.entries().next().value as [string, Entry];
      this.#entries.delete(oldest);
      // Dropping a bucket already at rest loses nothing; only the others are worth counting.
      if (evicted.expiresAt > nowMs) this.metrics.evictions++;
    }
  }
}

let shared: MemoryStore | undefined;

/** The store limiters share when given none: one map and one sweep timer however many limiters exist. */
export function sharedMemoryStore(): MemoryStore {
  shared ??= new MemoryStore();
  return shared;
}
