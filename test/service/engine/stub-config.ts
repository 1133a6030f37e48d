// A hand-built ServiceConfig for the decision engine's tests: rules looked up by their entries, as a loader would match them.
import { alignedWindow } from '../../../src/policies/aligned-window.js';
import type { LimitMatch, LimitRule, ServiceConfig } from '../../../src/service/config/types.js';
import type { RateLimitDescriptor } from '../../../src/service/protocol/messages.js';
import { Unit } from '../../../src/service/protocol/messages.js';

const UNIT_MS: Partial<Record<Unit, number>> = {
  [Unit.SECOND]: 1000,
  [Unit.MINUTE]: 60_000,
  [Unit.HOUR]: 3_600_000,
  [Unit.DAY]: 86_400_000,
};

export type RuleOptions = Partial<LimitRule> & { readonly requestsPerUnit: number; readonly unit: Unit };

/** A rule counted by the reference's aligned window, every flag off unless given. */
export function limitRule(key: string, options: RuleOptions): LimitRule {
  const windowMs = UNIT_MS[options.unit] ?? 1000;
  return {
    fullKey: `domain.${key}`,
    name: '',
    replaces: [],
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    policies: [alignedWindow({ limit: options.requestsPerUnit, windowMs })],
    alignedWindowMs: windowMs,
    scope: `svc.${key.replace(/[^A-Za-z0-9._:-]/g, '_')}`,
    source: { file: 'stub.yaml', line: 1 },
    ...options,
  };
}

/** `k=v,k2=v2`: the key a descriptor's entries are looked up by. */
export function entriesKey(descriptor: RateLimitDescriptor): string {
  return descriptor.entries.map((e) => `${e.key}=${e.value}`).join(',');
}

/** A configuration of one domain whose rules are keyed by `entriesKey`; `rules` may be replaced (a reload). */
export function stubConfig(
  domain: string,
  rules: Readonly<Record<string, LimitRule>>,
  rawBody?: Uint8Array,
): ServiceConfig {
  return {
    files: ['stub.yaml'],
    domains: [domain],
    findLimit(asked, descriptor): LimitMatch | undefined {
      if (asked !== domain) return undefined;
      const key = entriesKey(descriptor);
      const rule = rules[key];
      return rule === undefined ? undefined : { rule, counterKey: key, statsKey: rule.fullKey };
    },
    httpChecks: new Map(),
    rawBodies: rawBody === undefined ? new Map() : new Map([[domain, rawBody]]),
  };
}

/** A descriptor from `k=v` pairs, with its own hits when given. */
export function descriptor(entries: string, hitsAddend?: number): RateLimitDescriptor {
  const parsed = entries.split(',').map((pair) => {
    const [key = '', value = ''] = pair.split('=');
    return { key, value };
  });
  return hitsAddend === undefined ? { entries: parsed } : { entries: parsed, hitsAddend };
}
