// The degraded path: answers without Redis (the memory fallback, else the fail mode) and reports each failed call.
import { configError, TollgateError } from '../../core/errors.js';
import type { AnyPolicy } from '../../policies/policy.js';
import { MemoryStore } from '../memory/memory-store.js';
import { type DegradedMode, degradedResponse, type StoreRequest, type StoreResponse } from '../store.js';
import type { FailedCall } from './batch-outcome.js';
import { type HeldBack, LogThrottle } from './log-throttle.js';
import { errorKind, type RedisStoreMetrics } from './metrics.js';
import type { NodeBreakers } from './node-breakers.js';
import type { RedisStoreSettings } from './redis-store-options.js';

/**
 * What answered a decision without Redis, as the failure log says it: in full on the line written, and in short
 * where it counts the lines held back. Listed in the order the log names modes.
 */
const MODE_TEXT: Readonly<Record<DegradedMode, { readonly full: string; readonly short: string }>> = {
  fallback: {
    full: 'the memory fallback decides (each process enforcing its share of each limit)',
    short: 'memory fallback',
  },
  'fail-open': { full: 'failing open (requests allowed unchecked)', short: 'failing open' },
  'fail-closed': { full: 'failing closed (requests denied)', short: 'failing closed' },
};
const MODES = Object.keys(MODE_TEXT) as DegradedMode[];

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
  /** One line per interval for failed Redis calls, and one for a failing fallback, so neither hides the other. */
  readonly #log: LogThrottle;
  readonly #fallbackLog: LogThrottle;
  #stopped = false;

  constructor(settings: DegradedSettings, metrics: RedisStoreMetrics, breakers: NodeBreakers) {
    this.#settings = settings;
    this.#metrics = metrics;
    this.#breakers = breakers;
    // The fallback keeps its own time: the server's clock is exactly what is missing. An injected clock also
    // paces the log, so a test controls both.
    const now = settings.clock ?? Date.now;
    this.#fallback = settings.fallback === 'memory' ? new MemoryStore({ clock: now }) : undefined;
    this.#log = new LogThrottle(settings.logIntervalMs, now);
    this.#fallbackLog = new LogThrottle(settings.logIntervalMs, now);
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

  /**
   * The answer without Redis, counted once: the memory fallback's, or without one the fail mode's. A fallback that
   * throws leaves the decision to the fail mode, and is logged: a decision must never hang or fail for it.
   */
  answer(request: StoreRequest): StoreResponse {
    if (this.#fallback === undefined) return this.#counted(this.#failMode(request));
    let response: StoreResponse;
    try {
      const policies = this.#scaledPolicies(request.policies);
      response = { ...this.#fallback.evaluate({ ...request, policies }), degraded: 'fallback' };
    } catch (error) {
      response = this.#counted(this.#failMode(request));
      this.#logFallbackFailure(error, modeOf(response));
      return response;
    }
    this.#metrics.fallbackDecisions++;
    return this.#counted(response);
  }

  /** Answers a call's undecided decisions, then reports the call once: to the log and to its node's breaker. */
  failed({ shard, probeKey, decisions, error }: FailedCall): void {
    const answeredBy = new Set<DegradedMode>();
    for (const { request, resolve } of decisions) {
      const response = this.answer(request);
      resolve(response);
      answeredBy.add(modeOf(response));
    }
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

  #logFallbackFailure(error: unknown, mode: DegradedMode): void {
    const more = heldBack(this.#fallbackLog.admit([MODE_TEXT[mode].short]));
    if (more === undefined) return;
    this.#settings.logger.error(
      error,
      `[tollgate] the memory fallback failed; ${MODE_TEXT[mode].full} instead${more}`,
    );
  }

  /** Says what answered the failed call's decisions: the configured mode is not enough, a limiter may override it. */
  #logFailure(error: unknown, answeredBy: ReadonlySet<DegradedMode>): void {
    this.#metrics.errors++;
    this.#metrics.errorsByKind[errorKind(error)]++;
    const how = MODES.filter((mode) => answeredBy.has(mode));
    const more = heldBack(this.#log.admit(how.map((mode) => MODE_TEXT[mode].short)));
    if (more === undefined) return;
    this.#settings.logger.error(
      `[tollgate] Redis unusable; ${how.map((mode) => MODE_TEXT[mode].full).join('; ')}${more}: ${(error as Error)?.message ?? error}`,
    );
  }
}

/**
 * The suffix of a line written, naming how the held-back ones were answered (each mode of a held-back call counts
 * it once), most first; undefined when the line is itself held back.
 */
function heldBack(held: HeldBack | undefined): string | undefined {
  if (held === undefined) return undefined;
  if (held.count === 0) return '';
  const modes = [...held.byLabel].sort(([, a], [, b]) => b - a).map(([label, count]) => `${label} ${count}`);
  return ` (${held.count} more since the last report: ${modes.join(', ')})`;
}

/** Every answer made here says how it was made. */
function modeOf(response: StoreResponse): DegradedMode {
  return response.degraded as DegradedMode;
}
