// MemoryStore's options, and what they resolve to once, at construction.
import { type Duration, parseDuration } from '../../core/duration.js';
import { configError } from '../../core/errors.js';
import { knownKeys, optionalClock, positiveInteger, timerMs } from '../../core/validate.js';

export interface MemoryStoreOptions {
  /**
   * Hard bound on tracked buckets, across all scopes (about 105 to 115 bytes of heap each for a token bucket). Beyond
   * it one is evicted at once: a bucket at rest (it loses nothing), else the live one nearest to rest (its client gets
   * back early what it still owed: a token bucket's tokens due by then, a window's count), and one holding a
   * concurrency lease, a lockout's block or a booked wait last (evicting it breaks that). `stats().evictions` counts
   * them by state: `live` or `held` growing means the bound is below the buckets the traffic keeps live. Default
   * 100,000.
   */
  readonly maxBuckets?: number;
  /** Sweep period for buckets at rest (the timer is `unref()`d). Default 10 minutes. */
  readonly cleanupIntervalMs?: Duration;
  /**
   * A cap on how long a bucket is kept after its last write (the first sweep after it drops the bucket), for a
   * data-retention rule: a client address is personal data. Default: until its policy is at rest, for ever for a
   * bucket that never refills. A limiter whose policies need longer is refused at wire-up: a bucket dropped early
   * would hand its client fresh quota.
   */
  readonly inactiveAfterMs?: Duration;
  /** Set false to sweep only when `sweep()` is called. Default true. */
  readonly autoCleanup?: boolean;
  /** Epoch milliseconds; inject one in tests. Default `Date.now`. */
  readonly clock?: () => number;
}

const OPTIONS = ['maxBuckets', 'cleanupIntervalMs', 'inactiveAfterMs', 'autoCleanup', 'clock'];
/** It bounds buckets, of which one client may hold several, not clients. */
const RENAMED = { maxClients: 'renamed to `maxBuckets`' };

/** The options checked and resolved; no sweep period when sweeping is left to `sweep()` calls. */
export interface MemoryStoreSettings {
  readonly maxBuckets: number;
  readonly inactiveAfterMs: number | undefined;
  readonly cleanupIntervalMs: number | undefined;
  readonly clock: () => number;
}

export function memoryStoreSettings(options: MemoryStoreOptions): MemoryStoreSettings {
  knownKeys('MemoryStore', options, OPTIONS, RENAMED);
  const maxBuckets = positiveInteger('maxBuckets', options.maxBuckets ?? 100_000);
  const inactiveAfterMs =
    options.inactiveAfterMs === undefined
      ? undefined
      : parseDuration('inactiveAfterMs', options.inactiveAfterMs);
  const cleanupIntervalMs = timerMs(
    'cleanupIntervalMs',
    parseDuration('cleanupIntervalMs', options.cleanupIntervalMs ?? 600_000),
  );
  const clock = optionalClock(options.clock) ?? Date.now;
  if (options.autoCleanup !== undefined && typeof options.autoCleanup !== 'boolean') {
    throw configError('autoCleanup', 'must be a boolean', options.autoCleanup);
  }
  return {
    maxBuckets,
    inactiveAfterMs,
    cleanupIntervalMs: (options.autoCleanup ?? true) ? cleanupIntervalMs : undefined,
    clock,
  };
}

/** A limiter's policies each need a bucket of one request: `maxBuckets` must hold them all. */
export function checkBucketRoom(policies: number, maxBuckets: number): void {
  if (policies > maxBuckets)
    throw configError(
      'maxBuckets',
      `must be at least the number of policies of a limiter on this store (${policies})`,
      maxBuckets,
    );
}
