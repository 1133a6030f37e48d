// How long each admitted request takes, as plain JSON: a fixed time, or uniform within a range from a seeded generator.
import { type Duration, parseDuration } from '../../core/duration.js';
import { configError } from '../../core/errors.js';
import { mulberry32 } from '../../core/seeded-random.js';
import { knownKeys, MAX_SPAN, nonNegativeInteger, oneOf } from '../../core/validate.js';

/**
 * Each request's service time: how long an admitted request holds its concurrency slot before it is released.
 * Durations are ms or strings such as '2s'; a uniform time is a whole number of ms from `minMs` to `maxMs`.
 */
export type ServiceSpec =
  | { readonly kind: 'fixed'; readonly durationMs: Duration }
  | {
      readonly kind: 'uniform';
      readonly minMs: Duration;
      readonly maxMs: Duration;
      readonly seed: number;
    };

const SERVICE_KEYS: Readonly<Record<ServiceSpec['kind'], readonly string[]>> = {
  fixed: ['kind', 'durationMs'],
  uniform: ['kind', 'minMs', 'maxMs', 'seed'],
};

/**
 * One service time per arrival, in whole ms of at least 1 (so a request is released after it arrives); the same
 * spec always gives the same times. Throws a configuration error naming the field at fault.
 */
export function serviceTimes(spec: ServiceSpec, count: number): number[] {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw configError('service', 'must be an object such as { "kind": "fixed", "durationMs": "2s" }', spec);
  }
  const kind = oneOf('kind', spec.kind, Object.keys(SERVICE_KEYS) as ServiceSpec['kind'][]);
  knownKeys(`a ${kind} service time`, spec, SERVICE_KEYS[kind]);
  if (spec.kind === 'fixed') return new Array<number>(count).fill(span('durationMs', spec.durationMs));
  const min = span('minMs', spec.minMs);
  const max = span('maxMs', spec.maxMs);
  if (max < min) throw configError('maxMs', 'must not be below `minMs`', spec.maxMs);
  const seed = nonNegativeInteger('seed', spec.seed);
  if (seed > 0xffff_ffff) throw configError('seed', 'must be below 2^32', seed);
  const next = mulberry32(seed);
  return Array.from({ length: count }, () => min + Math.floor(next() * (max - min + 1)));
}

/** A positive duration that an arrival time plus it stays exact. */
function span(option: string, value: unknown): number {
  const ms = parseDuration(option, value);
  if (ms >= MAX_SPAN) throw configError(option, 'must be below 2^51 ms', value);
  return ms;
}
