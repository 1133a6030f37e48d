// A Tollgate store as an express-rate-limit store: a fixed window per client that counts every hit, denied ones too.
import { parseDuration } from '../../../core/duration.js';
import { configError, storeError } from '../../../core/errors.js';
import { MAX_SPAN } from '../../../core/validate.js';
import { createLimiter, type Limiter } from '../../../limiter/limiter.js';
import { foreignKey } from '../../../limiter/limiter-set.js';
import { fixedWindow } from '../../../policies/fixed-window.js';
import { validateScope } from '../../../stores/key.js';
import { type Store as CountingStore, isFailMode, isStore } from '../../../stores/store.js';
import { claimCounter } from './shared-counter.js';
import type { ClientRateLimitInfo, Options, Store } from './types.js';
import type { ValidationError } from './validations.js';

/** The counter namespace of a Tollgate store given as `store` without `tollgateStore()`. */
const DEFAULT_PREFIX = 'erl';
/** The Tollgate store a counter was made for when the app gave that store itself as `store`. */
const givenAsStore = new WeakMap<object, CountingStore>();

export interface TollgateStoreOptions {
  /**
   * The counter's namespace in the store: limiters sharing a store and a prefix share their counts. 1-64
   * characters of A-Z, a-z, 0-9, ".", "_", ":" or "-". Default 'erl'.
   */
  readonly prefix?: string;
}

/**
 * express-rate-limit's store interface over a Tollgate store (MemoryStore, RedisStore): `increment` counts in a
 * window opened by the client's first hit, `decrement` gives a hit back to the window that counts it. The counter
 * holds as many hits as a window allows (2^51 / windowMs), so every hit counts, and the limit is the middleware's.
 */
export class TollgateCounter implements Store {
  readonly prefix: string;
  readonly localKeys: boolean = false;
  /** Set by `init` when another limiter counts on this counter with another limit or window. */
  clash: ValidationError | undefined;
  protected readonly counted: CountingStore;
  #limiter: Limiter | undefined;
  #windowMs = 0;
  /** Keys given back to within this very millisecond: see `get`. */
  #emptied = new Set<string>();
  #emptiedAt = 0;

  constructor(store: CountingStore, options: TollgateStoreOptions = {}) {
    if (!isStore(store))
      throw configError('store', 'must be a Tollgate store (MemoryStore, RedisStore) for tollgateStore()');
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    try {
      validateScope(prefix);
    } catch {
      throw configError('prefix', 'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_", ":" or "-"', prefix);
    }
    this.counted = store;
    this.prefix = prefix;
  }

  init(options: Options): void {
    const windowMs = windowOf(options.windowMs);
    const limit = Math.floor((MAX_SPAN - 1) / windowMs);
    const policy = fixedWindow({ limit, windowMs, name: 'hits' });
    this.#limiter = createLimiter({ policy, store: this.counted, scope: this.prefix, failOpen: false });
    this.#windowMs = windowMs;
    if (!this.localKeys) this.clash = claimCounter(this.counted, this.prefix, options, passedStore(this));
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const id = foreignKey(key);
    const decision = await this.#counter().consume(id);
    if (isFailMode(decision.degraded)) throw unreachable();
    this.#emptied.delete(id);
    // A full counter (2^51 / windowMs hits) counts no more: past it, this is one more than it holds.
    const totalHits = decision.limit - decision.remaining + (decision.allowed ? 0 : 1);
    return { totalHits, resetTime: new Date(decision.nowMs + decision.resetMs) };
  }

  async decrement(key: string): Promise<void> {
    const id = foreignKey(key);
    await this.#counter().refund(id, { cost: 1 });
    const now = Date.now();
    if (now !== this.#emptiedAt) {
      this.#emptied.clear();
      this.#emptiedAt = now;
    }
    this.#emptied.add(id);
  }

  /**
   * The client's hits and window end, or undefined when it has no window open. A window whose hits were all given
   * back is still open, with 0 hits, as express-rate-limit's stores keep it. A look that spends nothing tells one
   * from no window by the time left: a window opened in this very millisecond has all of it, as no window would,
   * so only then does the record of this millisecond's give-backs decide.
   */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const id = foreignKey(key);
    const look = await this.#counter().peek(id, { cost: 1 });
    if (isFailMode(look.degraded)) throw unreachable();
    const totalHits = look.limit - look.remaining - (look.allowed ? 1 : 0);
    const given = this.#emptiedAt === Date.now() && this.#emptied.has(id);
    if (totalHits === 0 && look.resetMs >= this.#windowMs && !given) return undefined;
    return { totalHits, resetTime: new Date(look.nowMs + look.resetMs) };
  }

  async resetKey(key: string): Promise<void> {
    const id = foreignKey(key);
    this.#emptied.delete(id);
    await this.#counter().reset(id);
  }

  #counter(): Limiter {
    if (this.#limiter === undefined)
      throw storeError(
        'the store has not been initialised: rateLimit({ store }) calls its init(options) first',
      );
    return this.#limiter;
  }
}

/**
 * A Tollgate store as the `store` of a limiter, counting under `prefix`: limiters given one store and one prefix
 * share their counts (as express-rate-limit stores sharing a Redis prefix do), with another prefix they count apart.
 * A Tollgate store given as `store` directly counts under the prefix 'erl'.
 *
 * @example
 * const redis = new RedisStore({ client });
 * app.use('/api', rateLimit({ windowMs: 15 * MINUTE, limit: 100, store: tollgateStore(redis, { prefix: 'api' }) }));
 * app.use('/login', rateLimit({ windowMs: MINUTE, limit: 5, store: tollgateStore(redis, { prefix: 'login' }) }));
 */
export function tollgateStore(store: CountingStore, options?: TollgateStoreOptions): Store {
  return new TollgateCounter(store, options);
}

/** A Tollgate store given as `store` itself: counted under the prefix 'erl', and checked for reuse as given. */
export function counterOver(store: CountingStore): TollgateCounter {
  const counter = new TollgateCounter(store);
  givenAsStore.set(counter, store);
  return counter;
}

/** What the app passed as `store`: the Tollgate store a counter was made for, else the store itself. */
export function passedStore(store: Store): object {
  return givenAsStore.get(store) ?? store;
}

/**
 * `windowMs` in whole ms, as express-rate-limit's MemoryStore keeps it: its window ends at
 * `new Date(start + windowMs)`, which drops a fraction, so a window of `1000 / 3` ms lasts 333.
 */
function windowOf(windowMs: unknown): number {
  if (typeof windowMs !== 'number') return parseDuration('windowMs', windowMs);
  if (Number.isFinite(windowMs) && windowMs >= 1) return Math.floor(windowMs);
  throw configError('windowMs', 'must be a number of milliseconds from 1 up', windowMs);
}

function unreachable() {
  return storeError('the store could not be reached: the hit was neither counted nor given back');
}
