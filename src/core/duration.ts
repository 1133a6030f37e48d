// Durations as integer milliseconds, from a number of ms or a short string such as '500ms', '10s', '1m', '1h', '1d'.
import { configError } from './errors.js';

export type Duration = number | `${number}${DurationUnit}`;
type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

const UNIT_MS: Record<DurationUnit, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PATTERN = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** Parses a duration; the result must be a positive whole number of milliseconds. */
export function parseDuration(option: string, value: unknown): number {
  let ms: number | undefined;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    const match = PATTERN.exec(value.trim());
    if (match?.[1] !== undefined && match[2] !== undefined) {
      ms = Number(match[1]) * UNIT_MS[match[2] as DurationUnit];
    }
  }
  if (ms === undefined || !Number.isSafeInteger(ms) || ms <= 0) {
    throw configError(
      option,
      "must be a positive whole number of milliseconds or a duration such as '10s'",
      value,
    );
  }
  return ms;
}
