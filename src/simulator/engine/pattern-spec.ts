// Traffic patterns as plain JSON, and the fields each kind takes.
import type { Duration } from '../../core/duration.js';

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

/** The fields each pattern kind takes besides `kind`: any other is refused. */
export const PATTERN_KEYS: Readonly<Record<PatternKind, readonly string[]>> = {
  steady: ['ratePerSecond', 'durationMs'],
  bursts: ['size', 'everyMs', 'durationMs', 'spacingMs'],
  'boundary-burst': ['limit', 'windowMs', 'spacingMs'],
  random: ['meanRatePerSecond', 'durationMs', 'seed'],
  ramp: ['fromRatePerSecond', 'toRatePerSecond', 'durationMs'],
};
