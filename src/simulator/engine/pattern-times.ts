// Each traffic pattern as a generator of arrival times, its fields checked as it starts.
import { parseDuration } from '../../core/duration.js';
import { configError } from '../../core/errors.js';
import { mulberry32 } from '../../core/seeded-random.js';
import { nonNegativeInteger, nonNegativeNumber, positiveInteger } from '../../core/validate.js';
import type { PatternSpec } from './pattern-spec.js';

/**
 * Arrival times (whole ms, ascending) for a pattern whose `kind` and keys are already checked. A generator, so
 * that a caller can stop an absurd pattern at a bound instead of filling memory.
 */
export function* patternTimes(pattern: PatternSpec): Generator<number> {
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
