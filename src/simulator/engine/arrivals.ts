// Arrival lists from traffic patterns: generateArrivals() for a pattern as JSON, and one helper per pattern kind.
import type { Duration } from '../../core/duration.js';
import { argumentError, configError } from '../../core/errors.js';
import { knownKeys, oneOf } from '../../core/validate.js';
import { PATTERN_KEYS, type PatternKind, type PatternSpec } from './pattern-spec.js';
import { patternTimes } from './pattern-times.js';

/** Beyond this a pattern is a mistake (a rate in ms read as seconds, say) rather than a simulation. */
export const MAX_GENERATED_ARRIVALS = 1_000_000;

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
