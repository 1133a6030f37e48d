// The protocol's units: their names in files, their windows (a month is 30 days, a year 365, as the reference counts).
import { type AlignedWindowState, alignedWindow } from '../../policies/aligned-window.js';
import type { Policy } from '../../policies/policy.js';
import { Unit } from '../protocol/messages.js';

const SECOND_MS = 1_000;
const DAY_MS = 86_400_000;

/** Shortest first: what `unitFitting` walks. */
const UNITS: readonly (readonly [name: string, unit: Unit, ms: number])[] = [
  ['second', Unit.SECOND, SECOND_MS],
  ['minute', Unit.MINUTE, 60 * SECOND_MS],
  ['hour', Unit.HOUR, 3_600 * SECOND_MS],
  ['day', Unit.DAY, DAY_MS],
  ['week', Unit.WEEK, 7 * DAY_MS],
  ['month', Unit.MONTH, 30 * DAY_MS],
  ['year', Unit.YEAR, 365 * DAY_MS],
];

/** The names a file may give, for messages. */
export const UNIT_NAMES: readonly string[] = UNITS.map(([name]) => name);

/** `unit: MINUTE`, `minute` or `Minute`; undefined for anything else, `unknown` included. */
export function parseUnit(text: string): Unit | undefined {
  const lower = text.toLowerCase();
  return UNITS.find(([name]) => name === lower)?.[1];
}

/** The window of `unit` in ms; undefined for UNKNOWN or a number the protocol does not have. */
export function unitMs(unit: number): number | undefined {
  return UNITS.find(([, value]) => value === unit)?.[2];
}

/** 'minute' for MINUTE; 'unknown' for anything else. */
export function unitName(unit: number): string {
  return UNITS.find(([, value]) => value === unit)?.[0] ?? 'unknown';
}

/**
 * The reference's window for `requestsPerUnit` per `unit`: an epoch-aligned window named after its unit, so that a
 * unit's change is a new counter and a limit's change keeps the count. A unit `unitMs` does not know is refused as
 * a window of 0 ms.
 */
export function unitWindow(requestsPerUnit: number, unit: Unit): Policy<AlignedWindowState> {
  return alignedWindow({ limit: requestsPerUnit, windowMs: unitMs(unit) ?? 0, name: unitName(unit) });
}

/**
 * The unit `current_limit` reports for a policy of `windowMs`: the one nearest its window by ratio (30 s is a minute,
 * 2 days a day, 4 days a week), the shorter on a tie. A bucket that never refills (0) reports a year, the longest.
 */
export function unitFitting(windowMs: number): Unit {
  if (windowMs <= 0) return Unit.YEAR;
  const distance = (ms: number) => Math.abs(Math.log(windowMs / ms));
  let fitting = UNITS[0] as (typeof UNITS)[number];
  for (const candidate of UNITS) if (distance(candidate[2]) < distance(fitting[2])) fitting = candidate;
  return fitting[1];
}
