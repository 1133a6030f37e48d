// Durations in @fastify/rate-limit's words: '1 minute' and friends read to ms, and ms written back as '1 minute'.

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A year of 365.25 days, as the plugin counts one. */
const YEAR = 365.25 * DAY;

/** A number, then an optional unit in any of its spellings ('ms', 'sec', 'seconds', 'min', 'hrs', 'd', 'wk', 'yr'). */
const TEXT =
  /^(-?\d*\.?\d+) *(?:(m(?:illiseconds?|s(?:ecs?)?))|(s(?:ec(?:onds?|s)?)?)|(m(?:in(?:utes?|s)?)?)|(h(?:ours?|rs?)?)|(d(?:ays?)?)|(w(?:eeks?|ks?)?)|(y(?:ears?|rs?)?))?$/;
/** The ms per unit, in the order of TEXT's groups after the number. */
const UNITS = [1, SECOND, MINUTE, HOUR, DAY, 7 * DAY, YEAR];

/**
 * A `timeWindow` string in ms: undefined when it is not one, or its number is 0, as the plugin then falls back
 * to its default window.
 */
export function parseTimeWindow(text: string): number | undefined {
  const match = TEXT.exec(text.toLowerCase());
  const amount = match === null ? 0 : Number.parseFloat(match[1] as string);
  if (match === null || !amount) return undefined;
  const unit = UNITS.findIndex((_, i) => match[i + 2] !== undefined);
  return amount * (unit === -1 ? 1 : (UNITS[unit] as number));
}

/** The wait in a rejection's message: '1 minute', '30 seconds', '2 hours', under a second in ms ('500 ms'). */
export function describeWait(ms: number): string {
  const size = Math.abs(ms);
  if (size < SECOND) return `${ms} ms`;
  const sign = ms < 0 ? '-' : '';
  if (size < MINUTE) return inUnits(size / SECOND, sign, 'second');
  if (size < HOUR) return inUnits(size / MINUTE, sign, 'minute');
  if (size < DAY) return inUnits(size / HOUR, sign, 'hour');
  if (size < YEAR) return inUnits(size / DAY, sign, 'day');
  return inUnits(size / YEAR, sign, 'year');
}

/** Rounded half up to a whole number of the unit, which is plural unless there is exactly one. */
function inUnits(amount: number, sign: string, unit: string): string {
  const whole = Number.isInteger(amount) ? amount : Math.floor(amount + 0.5);
  return `${sign}${whole} ${unit}${whole === 1 ? '' : 's'}`;
}
