// A limit a request sets itself (`descriptor.limit`): built on the fly with the reference's window, never in shadow mode.
import type { AnyPolicy } from '../../policies/policy.js';
import type { LimitOverride, RateLimitDescriptor } from '../protocol/messages.js';
import { counterKey, descriptorKey, overrideScope } from './keys.js';
import type { LimitMatch } from './types.js';
import { unitMs, unitName, unitWindow } from './units.js';

/** Distinct overrides are few in practice (Envoy's route configuration sets them); past this many, start afresh. */
const MAX_CACHED = 1_024;

/** Where a limit no file declared comes from. */
const FROM_REQUEST = { file: '', line: 0 } as const;

/**
 * The matcher of overrides: the descriptor's own limit, counted per domain and unit over the request's entries,
 * whatever the configuration says of them. Undefined for a unit the protocol does not have (the reference fails the
 * request then) or a limit its window cannot count. Windows are kept per limit and unit, so each request does not
 * build one.
 */
export function overrideMatcher(): (
  domain: string,
  descriptor: RateLimitDescriptor,
  limit: LimitOverride,
) => LimitMatch | undefined {
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
    const policies = usable(limit) ? tryWindow(windowOf, limit) : undefined;
    if (policies === undefined) return undefined;
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

function usable(limit: LimitOverride): boolean {
  return (
    unitMs(limit.unit) !== undefined &&
    Number.isSafeInteger(limit.requestsPerUnit) &&
    limit.requestsPerUnit >= 0
  );
}

/** A window the policies cannot represent (a limit too large for its unit) is no limit, never an error per request. */
function tryWindow(
  windowOf: (limit: LimitOverride) => readonly AnyPolicy[],
  limit: LimitOverride,
): readonly AnyPolicy[] | undefined {
  try {
    return windowOf(limit);
  } catch {
    return undefined;
  }
}
