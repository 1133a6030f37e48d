// express-rate-limit's MemoryStore: its API and meaning, counting in a bounded Tollgate MemoryStore of its own.
import { MemoryStore as BoundedMemoryStore } from '../../../stores/memory/memory-store.js';
import { TollgateCounter } from './tollgate-counter.js';
import type { ClientRateLimitInfo, Options } from './types.js';
import type { Validations } from './validations.js';

/** express-rate-limit's window when none is given. */
export const DEFAULT_WINDOW_MS = 60_000;

/**
 * Counts in this process, each instance apart (the default store of every limiter is one of its own): a window per
 * client opened by its first hit. At most 100,000 clients are held; past that the one nearest its window's end is
 * dropped first.
 *
 * @example
 * app.use(rateLimit({ windowMs: 15 * MINUTE, limit: 100, store: new MemoryStore() }));
 */
export class MemoryStore extends TollgateCounter {
  override readonly localKeys = true;
  readonly #validations: Validations | undefined;
  #unusable: unknown;

  /** The limiter's checks are passed in only when the limiter creates its own store. */
  constructor(validations?: Validations) {
    // Read through a function, not captured: express-rate-limit's store follows Date.now wherever it is set.
    super(new BoundedMemoryStore({ clock: () => Date.now() }));
    this.#validations = validations;
    // A store used on its own, before any limiter calls `init`, counts in the default window, as the original's does.
    super.init({ windowMs: DEFAULT_WINDOW_MS } as Options);
  }

  /**
   * A `windowMs` no window can have (below 1 ms, not a duration) is reported by the limiter's check, not thrown, as
   * express-rate-limit's store never throws here; each hit then fails with the reason, rather than being counted
   * in a window that does not exist.
   */
  override init(options: Options): void {
    this.#validations?.windowMs(options.windowMs);
    try {
      super.init(options);
    } catch (error) {
      this.#unusable = error;
    }
  }

  override increment(key: string): Promise<ClientRateLimitInfo> {
    if (this.#unusable !== undefined) return Promise.reject(this.#unusable);
    return super.increment(key);
  }

  resetAll(): void {
    (this.counted as BoundedMemoryStore).clear();
  }

  shutdown(): void {
    (this.counted as BoundedMemoryStore).close();
  }
}
