// ThrottlerStorage over a Tollgate store: the default ThrottlerStorageService on a MemoryStore, any Store wrapped.
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { argumentError } from '../../../core/errors.js';
import type { Decision } from '../../../decision/decision.js';
import { createLimiter } from '../../../limiter/limiter.js';
import { foreignKey, LimiterSet } from '../../../limiter/limiter-set.js';
import { scopeNamed } from '../../../stores/key.js';
import { MemoryStore } from '../../../stores/memory/memory-store.js';
import { isFailMode, type Store } from '../../../stores/store.js';
import { figureProblem, wholeFigures } from './figures.js';
import { type ThrottlerStorageRecord, throttlerPolicy, throttlerRecord } from './throttler-policy.js';

export type { ThrottlerStorageRecord } from './throttler-policy.js';

/** What the guard counts with: @nestjs/throttler's storage interface, so any storage written for it works. */
export interface ThrottlerStorage {
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord>;
}

/** The injection token of the storage (`getStorageToken()`, `@InjectThrottlerStorage()`). */
export const ThrottlerStorage: unique symbol = Symbol('ThrottlerStorage');

/** How often the default storage drops records at rest, in ms. */
export const DEFAULT_SWEEP_INTERVAL = 60_000;

/**
 * A Tollgate store (MemoryStore, RedisStore, one of your own) as a ThrottlerStorage: each call is one atomic
 * decision of the store, counted as @nestjs/throttler counts, so several app instances on one RedisStore (or
 * Redis Cluster) share exact counts. Given as `storage`, a Tollgate store is wrapped in one of these for you.
 */
export class StoreThrottlerStorage implements ThrottlerStorage {
  readonly store: Store;
  // A resolvable figure's few results each get a limiter, per throttler name.
  readonly #limiters = new LimiterSet(256);

  constructor(store: Store) {
    this.store = store;
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const figures = wholeFigures(ttl, limit, blockDuration);
    const id = `${throttlerName}\n${figures.ttl}\n${figures.limit}\n${figures.blockDuration}`;
    const limiter = this.#limiters.for(id, () => {
      const problem = figureProblem(figures);
      if (problem !== undefined)
        throw argumentError(
          `the "${throttlerName}" throttler's "${problem.option}" ${problem.requirement} (got ${problem.value})`,
        );
      const policy = throttlerPolicy(figures.ttl, figures.limit, Math.max(0, figures.blockDuration));
      return createLimiter({
        policy,
        store: this.store,
        scope: scopeNamed(`throttler:${throttlerName}`, 'throttler.'),
      });
    });
    // An empty key (a `generateKey` of the app's own may give one) is counted like any other, as the original does.
    const decision = await limiter.consume(foreignKey(key));
    return recordOf(decision, figures.ttl, figures.limit);
  }
}

/**
 * @nestjs/throttler's default storage, in memory: a MemoryStore of its own (bounded), swept every
 * `sweepIntervalMs` (a subclass may set it in its constructor) from the first call on, closed when the app shuts
 * down.
 */
export class ThrottlerStorageService extends StoreThrottlerStorage implements OnApplicationShutdown {
  protected readonly sweepIntervalMs: number = DEFAULT_SWEEP_INTERVAL;
  #sweep: ReturnType<typeof setInterval> | undefined;

  constructor() {
    super(new MemoryStore({ autoCleanup: false }));
  }

  override increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    // Started on the first call, as the original's, so the interval a subclass sets is the one used.
    if (this.#sweep === undefined) {
      const store = this.store as MemoryStore;
      this.#sweep = setInterval(() => store.sweep(), this.sweepIntervalMs);
      this.#sweep.unref();
    }
    return super.increment(key, ttl, limit, blockDuration, throttlerName);
  }

  onApplicationShutdown(): void {
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    (this.store as MemoryStore).close();
  }
}

Injectable()(ThrottlerStorageService);

/** The decision as the storage's record; a store that could not be reached answers by its fail mode. */
function recordOf(decision: Decision, ttl: number, limit: number): ThrottlerStorageRecord {
  if (!isFailMode(decision.degraded)) return throttlerRecord(decision.remaining, decision.resetMs);
  const timeToExpire = Math.ceil(ttl / 1000);
  if (decision.allowed) return { totalHits: 0, timeToExpire, isBlocked: false, timeToBlockExpire: 0 };
  const wait = Math.max(1, Math.ceil((decision.retryAfterMs ?? 1000) / 1000));
  return { totalHits: limit + 1, timeToExpire, isBlocked: true, timeToBlockExpire: wait };
}
