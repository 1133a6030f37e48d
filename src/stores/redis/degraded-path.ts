// The degraded path: answers without Redis (the memory fallback, else the fail mode) and reports each failed call.
import { configError, TollgateError } from '../../errors.js';
import type { AnyPolicy } from '../../policies/policy.js';
import { MemoryStore } from '../memory-store.js';
import { type DegradedMode, degradedResponse, type StoreRequest, type StoreResponse } from '../store.js';
import type { FailedCall, Pending } from './batch.js';
import { LogThrottle } from './log-throttle.js';
import type { RedisStoreMetrics } from './metrics.js';
import type { NodeBreakers } from './node-breakers.js';
import type { RedisStoreSettings } from './redis-store-options.js';

/** What answered a decision without Redis, as the failure log says it. */
const ANSWERED_BY: Readonly<Record<DegradedMode, string>> = {
  fallback: 'the memory fallback decides (each process enforcing its share of each limit)',
  'fail-open': 'failing open (requests allowed unchecked)',
  'fail-closed': 'failing closed (requests denied)',
};

type DegradedSettings = Pick<
  RedisStoreSettings,
  'failOpen' | 'degradedRetryAfterMs' | 'fallback' | 'fallbackShare' | 'logIntervalMs' | 'logger' | 'clock'
>;

export class DegradedPath {
  readonly #settings: DegradedSettings;
  readonly #metrics: RedisStoreMetrics;
  readonly #breakers: NodeBreakers;
  readonly #fallback: MemoryStore | undefined;
  readonly #scaled = new WeakMap<readonly AnyPolicy[], readonly AnyPolicy[]>();
  readonly #log: LogThrottle;
  #stopped = false;

  constructor(settings: DegradedSettings, metrics: RedisStoreMetrics, breakers: NodeBreakers) {
    this.#settings = settings;
    this.#metrics = metrics;
    this.#breakers = breakers;
    // The fallback keeps its own time: the server's clock is exactly what is missing.
    this.#fallback =
      settings.fallback === 'memory' ? new MemoryStore({ clock: settings.clock ?? Date.now }) : undefined;
    this.#log = new LogThrottle(settings.logIntervalMs);
  }

  /** A limiter whose policies the fallback could not scale is refused: scaled here, once, so no outage finds out. */
  checkPolicies(policies: readonly AnyPolicy[]): void {
    if (this.#fallback === undefined) return;
    try {
      this.#scaledPolicies(policies);
    } catch (cause) {
      const why = cause instanceof TollgateError ? cause.message : String(cause);
      throw configError(
        'fallbackShare',
        `leaves a policy the memory fallback cannot enforce: ${why}`,
        this.#settings.fallbackShare,
      );
    }
  }

  reset(keys: readonly string[]): void {
    this.#fallback?.reset(keys);
  }

  /** The answer without Redis: the memory fallback's, or without one the fail mode's. Throws when the fallback does. */
  answer(request: StoreRequest): StoreResponse {
    if (this.#fallback === undefined) return this.#counted(this.#failMode(request));
    this.#metrics.fallbackDecisions++;
    const policies = this.#scaledPolicies(request.policies);
    return this.#counted({ ...this.#fallback.evaluate({ ...request, policies }), degraded: 'fallback' });
  }

  /** Answers a call's undecided decisions, then reports the call once: to the log and to its node's breaker. */
  failed({ shard, probeKey, decisions, error }: FailedCall): void {
    const answeredBy = new Set<DegradedMode>();
    for (const pending of decisions) answeredBy.add(this.#answerSurely(pending));
    // A closed store is neither reported nor probed: its decisions are answered all the same, quietly.
    if (this.#stopped) return;
    this.#logFailure(error, answeredBy);
    this.#breakers.failed(shard, probeKey, error);
  }

  /** Drops the fallback's counts, and reports no more failures (the store is closing). */
  stop(): void {
    this.#stopped = true;
    this.#fallback?.close();
  }

  /** Every pending decision is answered, whatever the fallback does: a decision must never hang. */
  #answerSurely({ request, resolve }: Pending): DegradedMode {
    try {
      const response = this.answer(request);
      resolve(response);
      return modeOf(response);
    } catch (error) {
      const response = this.#counted(this.#failMode(request));
      resolve(response);
      const instead = ANSWERED_BY[modeOf(response)];
      this.#settings.logger.error(error, `[tollgate] the memory fallback failed; ${instead} instead`);
      return modeOf(response);
    }
  }

  #failMode(request: StoreRequest): StoreResponse {
    const failOpen = request.failOpen ?? this.#settings.failOpen;
    const nowMs = this.#settings.clock?.() ?? Date.now();
    return degradedResponse(request.policies, failOpen, this.#settings.degradedRetryAfterMs, nowMs);
  }

  #counted(response: StoreResponse): StoreResponse {
    if (response.allowed) this.#metrics.degradedAllowed++;
    else this.#metrics.degradedDenied++;
    return response;
  }

  #scaledPolicies(policies: readonly AnyPolicy[]): readonly AnyPolicy[] {
    let scaled = this.#scaled.get(policies);
    if (scaled === undefined) {
      scaled = policies.map((policy) => policy.scale(this.#settings.fallbackShare));
      this.#scaled.set(policies, scaled);
    }
    return scaled;
  }

  /** Says what answered the failed call's decisions: the configured mode is not enough, a limiter may override it. */
  #logFailure(error: unknown, answeredBy: ReadonlySet<DegradedMode>): void {
    this.#metrics.errors++;
    const suppressed = this.#log.admit();
    if (suppressed === undefined) return;
    const more = suppressed > 0 ? ` (${suppressed} more since the last report)` : '';
    const how = (Object.keys(ANSWERED_BY) as DegradedMode[]).filter((mode) => answeredBy.has(mode));
    this.#settings.logger.error(
      `[tollgate] Redis unusable; ${how.map((mode) => ANSWERED_BY[mode]).join('; ')}${more}: ${(error as Error)?.message ?? error}`,
    );
  }
}

/** Every answer made here says how it was made. */
function modeOf(response: StoreResponse): DegradedMode {
  return response.degraded as DegradedMode;
}
