// A limit a request sets itself (`descriptor.limit`): built on the fly with the reference's window, never in shadow mode.
import { argumentError } from '../../core/errors.js';
import type { AnyPolicy } from '../../policies/policy.js';
import type { LimitOverride, RateLimitDescriptor } from '../protocol/messages.js';
import { counterKey, descriptorKey, overrideScope } from './keys.js';
import type { LimitMatch } from './types.js';
import { UNIT_NAMES, unitMs, unitName, unitWindow } from './units.js';

/** Distinct overrides are few in practice (Envoy's route configuration sets them); past this many, start afresh. */
const MAX_CACHED = 1_024;

/** Where a limit no file declared comes from. */
const FROM_REQUEST = { file: '', line: 0 } as const;

/**
 * The matcher of overrides: the descriptor's own limit, counted per domain and unit over the request's entries,
 * whatever the configuration says of them. Throws an ERR_TOLLGATE_ARGUMENT error for a unit the protocol does not
 * have (the reference fails the request then) or a limit its window cannot count. Windows are kept per limit and unit, so each request does not
 * build one.
 */
export function overrideMatcher(): (
  domain: string,
  descriptor: RateLimitDescriptor,
  limit: LimitOverride,
) => LimitMatch {
  const windows = new Map<string, readonly AnyPolicy[]>();
  const windowOf = (limit: LimitOverride): readonly AnyPolicy[] => {
    const id = `${limit.requestsPerUnit}/${limit.unit}`;
    const known = windows.get(id);
    if (known !== undefined) return known;
    if (windows.size >= MAX_CACHED) windows.clear();
    const policies = [unitWindow(limit.requestsPerUnit, limit.unit)];
    windows.set(id, policies);
    return policies;
  };
  return (domain, descriptor, limit) => {
    const policies = checkedWindow(windowOf, limit);
    const fullKey = descriptorKey(domain, descriptor.entries);
    const rule = {
      fullKey,
      name: '',
      replaces: [],
      unlimited: false,
      shadowMode: false,
      quotaMode: false,
      detailedMetric: false,
      requestsPerUnit: limit.requestsPerUnit,
      unit: limit.unit,
      policies,
      // One window, made by `windowOf`.
      alignedWindowMs: (policies[0] as AnyPolicy).windowMs,
      scope: overrideScope(domain, unitName(limit.unit)),
      source: FROM_REQUEST,
    };
    return { rule, counterKey: counterKey(descriptor.entries, []), statsKey: fullKey };
  };
}

/**
 * The override's window, or an ERR_TOLLGATE_ARGUMENT error (answered INVALID_ARGUMENT): a unit the protocol does not
 * have (UNKNOWN, the one a route configuration that forgot it sends) or a limit its unit cannot count would
 * otherwise turn the limit off without a word.
 */
function checkedWindow(
  windowOf: (limit: LimitOverride) => readonly AnyPolicy[],
  limit: LimitOverride,
): readonly AnyPolicy[] {
  if (unitMs(limit.unit) === undefined)
    throw argumentError(`\`limit.unit\` must be one of ${UNIT_NAMES.join(', ')} (received ${limit.unit})`);
  const { requestsPerUnit } = limit;
  if (!Number.isSafeInteger(requestsPerUnit) || requestsPerUnit < 0)
    throw argumentError(
      `\`limit.requests_per_unit\` must be a non-negative integer (received ${requestsPerUnit})`,
    );
  try {
    return windowOf(limit);
  } catch {
    throw argumentError(
      `\`limit.requests_per_unit\` ${requestsPerUnit} is more than a ${unitName(limit.unit)} can count`,
    );
  }
}
