// The figures a throttler can count by on a Tollgate store: checked at wire-up where static, else on each call.
import { MAX_THROTTLER_LIMIT, MAX_THROTTLER_MS } from './throttler-policy.js';

/** A throttler's three figures, durations in whole ms (as `wholeFigures` makes them). */
export interface Figures {
  readonly ttl: number;
  readonly limit: number;
  readonly blockDuration: number;
}

/** What is wrong with one figure: the option, what it must be, and the value given. */
export interface FigureProblem {
  readonly option: keyof Figures;
  readonly requirement: string;
  readonly value: number;
}

/** Durations rounded up to whole ms, as a timer waits out a fraction of one; the limit as given. */
export function wholeFigures(ttl: number, limit: number, blockDuration: number): Figures {
  return { ttl: Math.ceil(ttl), limit, blockDuration: Math.ceil(blockDuration) };
}

/** The first figure a Tollgate store cannot count by (see `MAX_THROTTLER_MS`), or `undefined`. */
export function figureProblem({ ttl, limit, blockDuration }: Figures): FigureProblem | undefined {
  const whole = (value: number, least: number, most: number) =>
    Number.isSafeInteger(value) && value >= least && value <= most;
  if (!whole(ttl, 1, MAX_THROTTLER_MS))
    return { option: 'ttl', requirement: 'must be from 1 ms to 2^38 ms', value: ttl };
  if (!whole(limit, 0, MAX_THROTTLER_LIMIT))
    return {
      option: 'limit',
      requirement: `must be a whole number from 0 to ${MAX_THROTTLER_LIMIT}`,
      value: limit,
    };
  if (!whole(blockDuration, -MAX_THROTTLER_MS, MAX_THROTTLER_MS))
    return { option: 'blockDuration', requirement: 'must be at most 2^38 ms', value: blockDuration };
  return undefined;
}
