// The simulator's engine: runs the library's own policy transitions over a list of arrival times, and makes those lists.
import { type Duration, parseDuration } from './duration.js';
import { configError, TollgateError } from './errors.js';
import { fixedWindow } from './policies/fixed-window.js';
import type { AnyPolicy, PolicyKind } from './policies/policy.js';
import { slidingWindow } from './policies/sliding-window.js';
import { slidingWindowCounter } from './policies/sliding-window-counter.js';
import { type TokenBucketOptions, tokenBucket } from './policies/token-bucket.js';
import type { WindowOptions } from './policies/window-options.js';
import { knownKeys, nonNegativeInteger, nonNegativeNumber, oneOf, positiveInteger } from './validate.js';

/** A policy as plain JSON: the factory's options plus its `kind`. */
export type PolicySpec =
  | ({ readonly kind: 'token-bucket' } & TokenBucketOptions)
  | ({ readonly kind: 'fixed-window' | 'sliding-window' | 'sliding-window-counter' } & WindowOptions);

export interface SimulationInput {
  readonly policies: readonly PolicySpec[];
  /** Arrival times in whole ms from the start, in ascending order (equal times are simultaneous requests). */
  readonly arrivals: readonly number[];
  /** Units every request spends. Default 1. */
  readonly cost?: number;
}

/** One request and what the policy told it. */
export interface TimelineEntry {
  readonly timeMs: number;
  readonly allowed: boolean;
  readonly remaining: number;
  /** 0 when allowed, -1 when no wait would have helped. */
  readonly retryAfterMs: number;
  /** The policy's level right after this request: see `PolicySimulation.level`. */
  readonly level: number;
}

/** The level between requests, read with a cost-0 evaluation that changes nothing (as `limiter.peek` does). */
export interface LevelSample {
  readonly timeMs: number;
  readonly level: number;
}

export interface SimulationSummary {
  readonly admitted: number;
  readonly rejected: number;
  /**
   * The most requests admitted in any span shorter than the policy's nominal window `windowMs` (the span a
   * sliding window log counts, `(t - windowMs, t]`); the whole run for a token bucket that never refills.
   */
  readonly maxAdmittedInWindow: number;
  /** The longest `retryAfterMs` a rejected client was told; 0 when none was told to wait. */
  readonly longestRetryAfterMs: number;
  /** Rejections told that no wait would help (`retryAfterMs` -1): not counted in `longestRetryAfterMs`. */
  readonly rejectedForever: number;
}

export interface PolicySimulation {
  /** The policy as its factory built it (durations in ms, defaults filled in). */
  readonly policy: {
    readonly kind: PolicyKind;
    readonly name: string;
    readonly limit: number;
    readonly windowMs: number;
  };
  /** What `level` counts: tokens left in a bucket, or units counted in a window (estimated, for the counter). */
  readonly level: 'tokens' | 'window-count';
  readonly timeline: readonly TimelineEntry[];
  /** Evenly spaced from 0 to a tenth past the last arrival, so the chart shows refill and expiry between requests. */
  readonly levels: readonly LevelSample[];
  readonly summary: SimulationSummary;
}

export interface Simulation {
  readonly arrivals: readonly number[];
  readonly cost: number;
  /** Index-aligned with the input's policies. */
  readonly policies: readonly PolicySimulation[];
}

const POLICY_KINDS: readonly PolicyKind[] = [
  'token-bucket',
  'fixed-window',
  'sliding-window',
  'sliding-window-counter',
];
const TOKEN_BUCKET_KEYS = ['kind', 'name', 'capacity', 'refillPerSecond', 'requestsPerMinute'];
const WINDOW_KEYS = ['kind', 'name', 'limit', 'windowMs'];
/** Level samples per run: enough for a smooth line at laptop width, few enough to keep responses small. */
const SAMPLES = 600;

/** Builds a policy from its JSON description with the library's own factory, so its errors are the factory's. */
export function policyFromSpec(spec: PolicySpec): AnyPolicy {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw configError('policy', 'must be an object such as { "kind": "fixed-window", ... }', spec);
  }
  const kind = oneOf('kind', spec.kind, POLICY_KINDS);
  knownKeys(`a ${kind} policy`, spec, kind === 'token-bucket' ? TOKEN_BUCKET_KEYS : WINDOW_KEYS);
  const { kind: _, ...options } = spec;
  switch (spec.kind) {
    case 'token-bucket':
      return tokenBucket(options as TokenBucketOptions);
    case 'fixed-window':
      return fixedWindow(options as WindowOptions);
    case 'sliding-window':
      return slidingWindow(options as WindowOptions);
    case 'sliding-window-counter':
      return slidingWindowCounter(options as WindowOptions);
  }
}

/** Bounds on what one `simulate()` call may cost, for a caller serving simulations to others. */
export interface SimulationLimits {
  /** Refuse, before running anything, a scenario whose `simulationWork` is above this. Default: no bound. */
  readonly maxWork?: number;
}

/**
 * Runs every policy over the same arrivals, threading each one's state as a store does (the transition's `next`
 * replaces the state when defined), one client, one request per arrival. No policy arithmetic happens here:
 * every figure is a `PolicyResult` field from the policy's own `evaluate` (a window's count is its limit minus
 * `remaining`), or a count of them.
 */
export function simulate(input: SimulationInput, limits: SimulationLimits = {}): Simulation {
  const scenario = prepare(input);
  if (limits.maxWork !== undefined) {
    const maxWork = positiveInteger('maxWork', limits.maxWork);
    const work = workOf(scenario);
    if (work > maxWork) {
      throw argumentError(
        `at most ${maxWork} units of work can be simulated at once (this scenario needs ${work}: a sliding ` +
          'window log costs up to its limit per arrival and per level sample; use fewer arrivals, a smaller ' +
          'limit or a sliding-window-counter)',
      );
    }
  }
  const { policies, arrivals, cost, sampleTimes } = scenario;
  return {
    arrivals: [...arrivals],
    cost,
    policies: policies.map((policy) => run(policy, arrivals, cost, sampleTimes)),
  };
}

/**
 * What `simulate(input)` costs, in state entries its transitions touch, worked out without running it: every
 * evaluation (one per arrival and one per level sample, for each policy) counts 1, plus, for a sliding window
 * log, the entries it copies, as many as the log holds: up to its limit, or the units the arrivals can have
 * admitted when fewer, and none when the cost is above the limit (nothing is ever admitted). The other
 * policies keep O(1) state. Throws what `simulate` throws for the same input.
 */
export function simulationWork(input: SimulationInput): number {
  return workOf(prepare(input));
}

interface Scenario {
  readonly policies: readonly AnyPolicy[];
  readonly arrivals: readonly number[];
  readonly cost: number;
  readonly sampleTimes: readonly number[];
}

function prepare(input: SimulationInput): Scenario {
  if (typeof input !== 'object' || input === null) {
    throw argumentError('the simulation input must be an object { policies, arrivals, cost? }');
  }
  if (!Array.isArray(input.policies) || input.policies.length === 0) {
    throw argumentError('`policies` must be a non-empty array of policy specs');
  }
  const policies = input.policies.map((spec, i) => {
    try {
      return policyFromSpec(spec);
    } catch (error) {
      // Say which policy is wrong, keeping the factory's code and wording.
      if (!(error instanceof TollgateError)) throw error;
      throw new TollgateError(error.code, `policy ${i + 1}: ${error.message}`, {
        ...(error.option === undefined ? {} : { option: error.option }),
        cause: error,
      });
    }
  });
  const arrivals = checkArrivals(input.arrivals);
  const cost = positiveInteger('cost', input.cost ?? 1);
  const last = arrivals.at(-1) ?? 0;
  const end = last + Math.ceil(last / 10);
  const step = Math.max(1, Math.ceil(end / SAMPLES));
  const sampleTimes: number[] = [];
  for (let t = 0; t <= end; t += step) sampleTimes.push(t);
  return { policies, arrivals, cost, sampleTimes };
}

function workOf({ policies, arrivals, cost, sampleTimes }: Scenario): number {
  const evaluations = arrivals.length + sampleTimes.length;
  let work = 0;
  for (const policy of policies) {
    const log =
      policy.kind !== 'sliding-window' || cost > policy.limit
        ? 0
        : Math.min(policy.limit, arrivals.length * cost);
    work += evaluations * (1 + log);
  }
  return work;
}

function run(
  policy: AnyPolicy,
  arrivals: readonly number[],
  cost: number,
  sampleTimes: readonly number[],
): PolicySimulation {
  const levelOf = (remaining: number) =>
    policy.kind === 'token-bucket' ? remaining : policy.limit - remaining;
  const timeline: TimelineEntry[] = [];
  const levels: LevelSample[] = [];
  let state: unknown;
  let s = 0;
  const sampleUntil = (timeMs: number) => {
    for (; s < sampleTimes.length && (sampleTimes[s] as number) <= timeMs; s++) {
      const at = sampleTimes[s] as number;
      levels.push({ timeMs: at, level: levelOf(policy.evaluate(state, at, 0).result.remaining) });
    }
  };
  for (const timeMs of arrivals) {
    sampleUntil(timeMs);
    const { result, next } = policy.evaluate(state, timeMs, cost);
    if (next !== undefined) state = next;
    const { allowed, remaining, retryAfterMs } = result;
    timeline.push({ timeMs, allowed, remaining, retryAfterMs, level: levelOf(remaining) });
  }
  sampleUntil(Number.POSITIVE_INFINITY);
  return {
    policy: { kind: policy.kind, name: policy.name, limit: policy.limit, windowMs: policy.windowMs },
    level: policy.kind === 'token-bucket' ? 'tokens' : 'window-count',
    timeline,
    levels,
    summary: summarize(timeline, policy.windowMs),
  };
}

function summarize(timeline: readonly TimelineEntry[], windowMs: number): SimulationSummary {
  const admittedAt = timeline.filter((e) => e.allowed).map((e) => e.timeMs);
  let maxAdmittedInWindow = windowMs === 0 ? admittedAt.length : 0;
  if (windowMs > 0) {
    // Two pointers over the admitted times: the span (t - windowMs, t] ending at each admission.
    for (let right = 0, left = 0; right < admittedAt.length; right++) {
      const t = admittedAt[right] as number;
      while ((admittedAt[left] as number) <= t - windowMs) left++;
      maxAdmittedInWindow = Math.max(maxAdmittedInWindow, right - left + 1);
    }
  }
  const rejected = timeline.filter((e) => !e.allowed);
  return {
    admitted: admittedAt.length,
    rejected: rejected.length,
    maxAdmittedInWindow,
    longestRetryAfterMs: rejected.reduce((longest, e) => Math.max(longest, e.retryAfterMs), 0),
    rejectedForever: rejected.filter((e) => e.retryAfterMs < 0).length,
  };
}

function checkArrivals(arrivals: unknown): number[] {
  if (!Array.isArray(arrivals)) throw argumentError('`arrivals` must be an array of ms offsets');
  let previous = 0;
  arrivals.forEach((t: unknown, i) => {
    // Policies count time in whole ms; a fraction would break the token bucket's integer arithmetic.
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 0) {
      throw argumentError(
        `arrival ${i + 1} must be a non-negative whole number of ms (received ${String(t)})`,
      );
    }
    if (t < previous) {
      throw argumentError(
        `arrivals must be in ascending order (arrival ${i + 1}, ${t}, is before ${previous})`,
      );
    }
    previous = t;
  });
  return arrivals as number[];
}

function argumentError(message: string): TollgateError {
  return new TollgateError('ERR_TOLLGATE_ARGUMENT', message);
}

/** Traffic patterns as plain JSON, as `POST /api/simulate` takes them. Durations are ms or strings such as '10s'. */
export type PatternSpec =
  | { readonly kind: 'steady'; readonly ratePerSecond: number; readonly durationMs: Duration }
  | {
      readonly kind: 'bursts';
      readonly size: number;
      readonly everyMs: Duration;
      readonly durationMs: Duration;
      readonly spacingMs?: number;
    }
  | {
      readonly kind: 'boundary-burst';
      readonly limit: number;
      readonly windowMs: Duration;
      readonly spacingMs?: number;
    }
  | {
      readonly kind: 'random';
      readonly meanRatePerSecond: number;
      readonly durationMs: Duration;
      readonly seed: number;
    }
  | {
      readonly kind: 'ramp';
      readonly fromRatePerSecond: number;
      readonly toRatePerSecond: number;
      readonly durationMs: Duration;
    };

export type PatternKind = PatternSpec['kind'];

/** Beyond this a pattern is a mistake (a rate in ms read as seconds, say) rather than a simulation. */
export const MAX_GENERATED_ARRIVALS = 1_000_000;

const PATTERN_KEYS: Readonly<Record<PatternKind, readonly string[]>> = {
  steady: ['ratePerSecond', 'durationMs'],
  bursts: ['size', 'everyMs', 'durationMs', 'spacingMs'],
  'boundary-burst': ['limit', 'windowMs', 'spacingMs'],
  random: ['meanRatePerSecond', 'durationMs', 'seed'],
  ramp: ['fromRatePerSecond', 'toRatePerSecond', 'durationMs'],
};

/**
 * Arrival times (whole ms, ascending) for a pattern; every pattern is deterministic. Throws a configuration
 * error naming the field at fault, or an argument error when the pattern makes more than `maxArrivals`.
 */
export function generateArrivals(pattern: PatternSpec, maxArrivals = MAX_GENERATED_ARRIVALS): number[] {
  if (typeof pattern !== 'object' || pattern === null || Array.isArray(pattern)) {
    throw configError('pattern', 'must be an object such as { "kind": "steady", ... }', pattern);
  }
  const kind = oneOf('kind', pattern.kind, Object.keys(PATTERN_KEYS) as PatternKind[]);
  knownKeys(`the ${kind} pattern`, pattern, ['kind', ...PATTERN_KEYS[kind]]);
  const arrivals: number[] = [];
  // The patterns are generators so that an absurd one stops at the bound instead of filling memory.
  for (const t of patternTimes(pattern)) {
    if (arrivals.length === maxArrivals) {
      throw argumentError(`the ${kind} pattern makes more than ${maxArrivals} arrivals`);
    }
    arrivals.push(t);
  }
  return arrivals;
}

/** `ratePerSecond` requests a second, evenly spaced, the first at 0. */
export function steady(ratePerSecond: number, durationMs: Duration): number[] {
  return generateArrivals({ kind: 'steady', ratePerSecond, durationMs });
}

/** `size` requests every `everyMs`, the first burst at 0; within a burst, `spacingMs` apart (default 0: at once). */
export function bursts(size: number, everyMs: Duration, durationMs: Duration, spacingMs = 0): number[] {
  return generateArrivals({ kind: 'bursts', size, everyMs, durationMs, spacingMs });
}

/**
 * The window-boundary burst: `limit` requests just before a window boundary and `limit` just after.
 * Tollgate's fixed window is anchored at the client's first request, not at the clock, so the pattern opens
 * with one request at 0 that anchors the window, which puts the boundary at `windowMs`. Then come `limit`
 * requests `spacingMs` apart ending `spacingMs` before the boundary, and `limit` from the boundary on.
 * `spacingMs` defaults to a twentieth of the window shared among the `limit` requests (at least 1 ms).
 *
 * The anchoring request holds one of the first window's slots, so a fixed window admits the anchor,
 * `limit - 1` before the boundary and `limit` after it: `2 * limit - 1` inside one window length (a clock-aligned
 * fixed window would admit `2 * limit`), where a sliding window log admits `limit`.
 */
export function boundaryBurst(limit: number, windowMs: Duration, spacingMs?: number): number[] {
  return generateArrivals({
    kind: 'boundary-burst',
    limit,
    windowMs,
    ...(spacingMs === undefined ? {} : { spacingMs }),
  });
}

/**
 * Poisson arrivals at `meanRatePerSecond`: exponential gaps drawn from a seeded PRNG (mulberry32), so a seed
 * always gives the same times. `seed` is a 32-bit unsigned integer.
 */
export function random(meanRatePerSecond: number, durationMs: Duration, seed: number): number[] {
  return generateArrivals({ kind: 'random', meanRatePerSecond, durationMs, seed });
}

/**
 * A rate changing linearly from `fromRatePerSecond` to `toRatePerSecond`: request k (from 0) arrives when the
 * expected count, the integral of the rate, reaches k.
 */
export function ramp(fromRatePerSecond: number, toRatePerSecond: number, durationMs: Duration): number[] {
  return generateArrivals({ kind: 'ramp', fromRatePerSecond, toRatePerSecond, durationMs });
}

function* patternTimes(pattern: PatternSpec): Generator<number> {
  switch (pattern.kind) {
    case 'steady': {
      const rate = positiveNumber('ratePerSecond', pattern.ratePerSecond);
      const duration = parseDuration('durationMs', pattern.durationMs);
      for (let i = 0; (i * 1000) / rate < duration; i++) yield Math.round((i * 1000) / rate);
      return;
    }
    case 'bursts': {
      const size = positiveInteger('size', pattern.size);
      const every = parseDuration('everyMs', pattern.everyMs);
      const duration = parseDuration('durationMs', pattern.durationMs);
      const spacing = nonNegativeInteger('spacingMs', pattern.spacingMs ?? 0);
      // Overlapping bursts would interleave, and arrivals must stay in order.
      if ((size - 1) * spacing >= every) {
        throw configError('spacingMs', 'times `size - 1` must be below `everyMs`, so bursts do not overlap');
      }
      for (let start = 0; start < duration; start += every) {
        for (let j = 0; j < size; j++) yield start + j * spacing;
      }
      return;
    }
    case 'boundary-burst': {
      const limit = positiveInteger('limit', pattern.limit);
      const window = parseDuration('windowMs', pattern.windowMs);
      const spacing = positiveInteger(
        'spacingMs',
        pattern.spacingMs ?? Math.max(1, Math.floor(window / (20 * limit))),
      );
      // Both groups must fit inside one window length after the anchor for the burst to mean anything.
      if ((2 * limit - 1) * spacing >= window) {
        throw configError('spacingMs', 'times `2 * limit - 1` must be below `windowMs`', spacing);
      }
      yield 0;
      for (let j = limit; j >= 1; j--) yield window - j * spacing;
      for (let j = 0; j < limit; j++) yield window + j * spacing;
      return;
    }
    case 'random': {
      const rate = positiveNumber('meanRatePerSecond', pattern.meanRatePerSecond);
      const duration = parseDuration('durationMs', pattern.durationMs);
      const seed = nonNegativeInteger('seed', pattern.seed);
      if (seed > 0xffff_ffff) throw configError('seed', 'must be below 2^32', seed);
      const next = mulberry32(seed);
      // 1 - u lies in (0, 1], so the logarithm is finite.
      const gap = () => -Math.log(1 - next()) * (1000 / rate);
      for (let t = gap(); t < duration; t += gap()) yield Math.floor(t);
      return;
    }
    case 'ramp': {
      const from = nonNegativeNumber('fromRatePerSecond', pattern.fromRatePerSecond);
      const to = nonNegativeNumber('toRatePerSecond', pattern.toRatePerSecond);
      if (from === 0 && to === 0)
        throw configError('toRatePerSecond', 'and `fromRatePerSecond` cannot both be 0');
      const duration = parseDuration('durationMs', pattern.durationMs);
      // Expected count N(t) = from * t + a * t^2 with t in seconds; request k arrives at N(t) = k, solved in
      // the form that stays exact when a is 0 and has no cancellation when a is small.
      const a = (to - from) / (2 * (duration / 1000));
      for (let k = 0; ; k++) {
        const seconds = k === 0 ? 0 : (2 * k) / (from + Math.sqrt(from * from + 4 * a * k));
        // NaN (no real root: the ramp never reaches k) ends it too.
        if (!(seconds * 1000 < duration)) return;
        yield Math.round(seconds * 1000);
      }
    }
  }
}

function positiveNumber(option: string, value: unknown): number {
  if (nonNegativeNumber(option, value) === 0) throw configError(option, 'must be a positive number', value);
  return value as number;
}

/** mulberry32: a small, well-mixed 32-bit PRNG; floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
