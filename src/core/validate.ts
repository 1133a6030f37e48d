// Option checks shared by every factory, so each rule and its wording exist once.
import { configError } from './errors.js';

/**
 * The longest span a policy's state may cover (limit x window in ms, capacity x refill interval in µs): a quarter of
 * the integers both engines (JavaScript and Redis Lua doubles) represent exactly, leaving room for the clock it is
 * added to.
 */
export const MAX_SPAN = 2 ** 51;

export function positiveInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw configError(option, 'must be a positive integer', value);
  }
  return value;
}

/** A rejection's status: an HTTP error status, 400-599. */
export function errorStatus(option: string, value: unknown): number {
  const status = positiveInteger(option, value);
  if (status < 400 || status > 599)
    throw configError(option, 'must be an HTTP error status (400-599)', status);
  return status;
}

/** The longest delay Node's timers honour; a longer one fires at once (with a warning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A positive whole number of milliseconds that a timer will wait for: beyond about 24.8 days one fires at once. */
export function timerMs(option: string, value: unknown): number {
  const ms = positiveInteger(option, value);
  if (ms > MAX_TIMER_MS)
    throw configError(option, `must be at most ${MAX_TIMER_MS} ms (about 24.8 days)`, value);
  return ms;
}

export function nonNegativeInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw configError(option, 'must be a non-negative integer', value);
  }
  return value;
}

export function nonNegativeNumber(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw configError(option, 'must be a finite non-negative number', value);
  }
  return value;
}

export function optionalFunction<T>(option: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw configError(option, 'must be a function', value);
  }
  return value;
}

export function oneOf<T extends string | boolean>(option: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    throw configError(option, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, value);
  }
  return value as T;
}

/**
 * Rejects misspelled options early: an unknown key is almost always a typo of a known one, so the error names the
 * nearest known key when there is one close enough to be the intended one. `elsewhere` names options this factory
 * does not take but a user may bring (a renamed option, another library's), each with what to write instead; a
 * typo of one of those gets both the name and the advice.
 */
export function knownKeys(
  where: string,
  options: object,
  known: readonly string[],
  elsewhere: Readonly<Record<string, string>> = {},
): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    if (Object.hasOwn(elsewhere, key))
      throw configError(key, `is not an option of ${where} (${elsewhere[key]})`);
    const guess = nearest(key, [...known, ...Object.keys(elsewhere)]);
    const hint =
      guess === undefined
        ? ''
        : Object.hasOwn(elsewhere, guess)
          ? `; did you mean \`${guess}\`? (${elsewhere[guess]})`
          : `; did you mean \`${guess}\`?`;
    throw configError(key, `is not an option of ${where}${hint}`);
  }
}

/**
 * The candidate a typo most likely meant: the fewest edits (case ignored, a swap of two neighbours one edit), at
 * most one edit per three characters of the typo, so `windowMS` finds `windowMs` but `foo` finds nothing; of
 * equals, the first.
 */
function nearest(word: string, candidates: readonly string[]): string | undefined {
  const budget = Math.floor(word.length / 3);
  let best: string | undefined;
  let bestDistance = budget + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps, one edit each. */
function editDistance(a: string, b: string): number {
  // Rows i-2, i-1 and i of the dynamic programme over prefixes of a (rows) and b (columns).
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      let cost = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        cost = Math.min(cost, (before[j - 2] as number) + 1);
      row.push(cost);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length] as number;
}

/** A port to listen on: 0 for any free port, the one chosen then known once listening. */
export function portOption(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65_535)
    throw configError(option, 'must be a port number from 0 to 65535 (0 for any free port)', value);
  return value;
}

/** A host to listen on: a name or an address (an IPv6 one with or without its brackets). */
export function hostOption(option: string, value: unknown): string {
  if (typeof value !== 'string' || value === '')
    throw configError(option, 'must be a host name or address', value);
  return value;
}

/** An injected clock (for tests): a function returning epoch milliseconds. */
export function optionalClock(value: (() => number) | undefined): (() => number) | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw configError('clock', 'must be a function returning epoch milliseconds', value);
  }
  return value;
}

/** A logger option: anything with `warn` and `error` (console, pino, winston); console when absent. */
export function loggerOption<T extends { warn: unknown; error: unknown }>(
  value: T | undefined,
  fallback: T,
): T {
  const logger = value ?? fallback;
  if (typeof logger?.warn !== 'function' || typeof logger.error !== 'function')
    throw configError('logger', 'must have warn() and error() methods');
  return logger;
}
