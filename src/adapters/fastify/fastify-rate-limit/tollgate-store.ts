// The plugin's store contract over a Tollgate store: each hit counted by the hit counter, through a Tollgate limiter.
import { argumentError, configError, storeError } from '../../../core/errors.js';
import type { Decision } from '../../../decision/decision.js';
import { createLimiter, type Limiter } from '../../../limiter/limiter.js';
import { foreignKey, LimiterSet } from '../../../limiter/limiter-set.js';
import { scopeNamed } from '../../../stores/key.js';
import { MemoryStore } from '../../../stores/memory/memory-store.js';
import { isFailMode, type Store } from '../../../stores/store.js';
import { COUNTABLE, hitCounter, type PastMax } from './hit-counter.js';
import type {
  FastifyRateLimitStore,
  RateLimitRouteParams,
  RateLimitStoreCallback,
  ResolvedRateLimitParams,
} from './types.js';

/** The plugin's local store keeps this many keys per route unless `cache` says otherwise. */
const DEFAULT_CACHE = 5000;
/** The key prefix of the plugin's Redis store, kept so counters are named alike. */
export const DEFAULT_NAMESPACE = 'fastify-rate-limit-';

/** Where a store counts: a Tollgate store shared by every route under a namespace, or a memory store per route. */
interface Backing {
  readonly store: Store;
  /** Set for the default: each route gets a fresh memory store holding at most this many keys. */
  readonly cache: number | undefined;
  readonly namespace: string;
  /** Limits made by the decorators with options of their own, numbered in the order they were made. */
  readonly decorated: { made: number };
}

/**
 * A store of the plugin's contract counting in a Tollgate store, so any Tollgate store (RedisStore, on a cluster
 * too) counts exactly what the plugin's own stores count. The default (no `store`, no `redis`) is one bounded
 * MemoryStore per route, as the plugin's local store keeps an LRU map per route.
 */
export class TollgateRateLimitStore implements FastifyRateLimitStore {
  readonly #backing: Backing;
  readonly #pastMax: PastMax;
  readonly #scope: string;
  /** One limiter per (timeWindow, max) met. */
  readonly #limiters = new LimiterSet();

  private constructor(backing: Backing, params: ResolvedRateLimitParams) {
    this.#backing = backing;
    this.#pastMax = params.continueExceeding ? 'continue' : params.exponentialBackoff ? 'backoff' : 'count';
    this.#scope = scopeNamed(backing.namespace, 'frl-');
    // A limit of fixed numbers gets its limiter now, so what the store refuses of it (a retention cap shorter than
    // the window) is said at wire-up, not on the first request.
    const { timeWindow, max } = params;
    if (typeof timeWindow === 'number' && timeWindow >= COUNTABLE)
      throw configError('timeWindow', 'must be below 2^51 ms', timeWindow);
    if (typeof timeWindow === 'number' && typeof max === 'number') this.#limiterFor(timeWindow, max);
  }

  /** The default store: the plugin's local store, bounded by `cache` keys. */
  static local(params: ResolvedRateLimitParams, cache: unknown): TollgateRateLimitStore {
    return TollgateRateLimitStore.#fresh(params, cache, DEFAULT_NAMESPACE);
  }

  /** Counts in `store`, shared with every process using it, under `namespace` (the plugin's `nameSpace`). */
  static over(
    store: Store,
    params: ResolvedRateLimitParams,
    namespace = DEFAULT_NAMESPACE,
  ): TollgateRateLimitStore {
    return new TollgateRateLimitStore({ store, cache: undefined, namespace, decorated: { made: 0 } }, params);
  }

  static #fresh(params: ResolvedRateLimitParams, cache: unknown, namespace: string) {
    const maxBuckets = cacheOf(cache);
    // Never swept: as the plugin's map, it is bounded by size alone, and needs no timer to close.
    const store = new MemoryStore({ maxBuckets, autoCleanup: false });
    return new TollgateRateLimitStore(
      { store, cache: maxBuckets, namespace, decorated: { made: 0 } },
      params,
    );
  }

  incr(key: string, callback: RateLimitStoreCallback, timeWindow: number, max: number): void {
    this.#count(key, callback, timeWindow, max, 1);
  }

  read(key: string, callback: RateLimitStoreCallback, timeWindow: number, max: number): void {
    this.#count(key, callback, timeWindow, max, 0);
  }

  /**
   * A route's store: its own memory store for the default, else the shared store under the route's method and URL;
   * a decorator's limit is numbered instead, so each counts apart as it does in the plugin's local store.
   */
  child(route: RateLimitRouteParams): TollgateRateLimitStore {
    const backing = this.#backing;
    if (backing.cache !== undefined)
      return TollgateRateLimitStore.#fresh(route, route.cache, DEFAULT_NAMESPACE);
    const { method, url } = route.routeInfo;
    const own =
      method === undefined && url === undefined ? `decorated${++backing.decorated.made}` : `${method}${url}`;
    return new TollgateRateLimitStore({ ...backing, namespace: `${backing.namespace}${own}-` }, route);
  }

  #count(key: unknown, callback: RateLimitStoreCallback, timeWindow: number, max: number, cost: 0 | 1): void {
    // A number key counts under its string form, as the plugin's Redis store spells it into its key; an empty key
    // counts as the plugin's stores count it.
    const id = foreignKey(key);
    let decided: Decision | Promise<Decision>;
    try {
      const limiter = this.#limiterFor(timeWindow, max);
      // On a memory store the answer comes at once, as the plugin's local store gives it.
      if (cost === 0) decided = limiter.peek(id, { cost: 0 });
      else decided = limiter.store.synchronous === true ? limiter.consumeSync(id) : limiter.consume(id);
    } catch (error) {
      callback(error as Error);
      return;
    }
    if (decided instanceof Promise) decided.then((decision) => answer(decision, callback), callback);
    else answer(decided, callback);
  }

  #limiterFor(timeWindow: unknown, max: unknown): Limiter {
    const windowMs = windowOf(timeWindow);
    const bound = this.#pastMax === 'count' ? 0 : boundOf(max);
    return this.#limiters.for(`${windowMs}:${bound}`, () => {
      const policy = hitCounter(windowMs, bound, this.#pastMax);
      return createLimiter({ policy, store: this.#backing.store, scope: this.#scope, failOpen: false });
    });
  }
}

function answer(decision: Decision, callback: RateLimitStoreCallback): void {
  // A fail mode's answer knows nothing of the count: the plugin's `skipOnError` decides what to do.
  if (isFailMode(decision.degraded))
    callback(storeError('the rate limit store is unreachable: the hit could not be counted'));
  else callback(null, { current: COUNTABLE - decision.remaining, ttl: decision.resetMs });
}

/** The keys a route's memory store holds at most: the plugin's `cache`. */
function cacheOf(cache: unknown): number {
  if (cache === undefined) return DEFAULT_CACHE;
  if (typeof cache === 'number' && Number.isSafeInteger(cache) && cache > 0) return cache;
  throw configError('cache', 'must be a positive whole number of keys', cache);
}

/** A window in whole ms: a request's start and end are whole ms, so rounding up ends it at the same instant. */
function windowOf(timeWindow: unknown): number {
  if (typeof timeWindow === 'number' && timeWindow >= 0 && timeWindow < COUNTABLE)
    return Math.ceil(timeWindow);
  throw argumentError(`\`timeWindow\` must give a number of ms from 0 to 2^51 (gave ${String(timeWindow)})`);
}

/** `max` as a whole count: a count passes it exactly when it passes its floor; none passes NaN or Infinity. */
function boundOf(max: unknown): number {
  if (typeof max !== 'number' || Number.isNaN(max) || max >= COUNTABLE) return COUNTABLE;
  return Math.max(-1, Math.floor(max));
}
