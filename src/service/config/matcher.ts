// The reference's lookup of a request descriptor's limit, level by level, and the names it is counted under.
import type { Entry, RateLimitDescriptor } from '../protocol/messages.js';
import type { DescriptorNode } from './descriptor-tree.js';
import { counterKey, keyValue, statsKeyOf } from './keys.js';
import type { LimitMatch, LimitRule } from './types.js';

/** How one request entry matched a level: its node, and whether by value, by wildcard or by key alone. */
interface Step {
  readonly node: DescriptorNode;
  readonly via: 'value' | 'wildcard' | 'key';
  /** The composite key it matched under. */
  readonly composite: string;
  /** A shared wildcard's value pattern (`files/*`), standing for the request's value. */
  readonly pattern?: string;
}

/**
 * The limit of `descriptor` under `root`: at each level the exact `key_value` first, then the first wildcard in load
 * order whose text before `*` starts `key_value`, then `key` alone. A limit applies only at the request's last entry,
 * and a request deeper than the configuration has none.
 */
export function matchDescriptor(
  domain: string,
  root: DescriptorNode,
  descriptor: RateLimitDescriptor,
): LimitMatch | undefined {
  const { entries } = descriptor;
  const steps: Step[] = [];
  let level = root;
  for (const [index, entry] of entries.entries()) {
    const step = matchLevel(level, entry);
    if (step === undefined) return undefined;
    steps.push(step);
    if (index === entries.length - 1)
      return step.node.rule && matchOf(domain, step.node.rule, entries, steps);
    if (step.node.children.size === 0) return undefined;
    level = step.node;
  }
  return undefined;
}

function matchLevel(level: DescriptorNode, entry: Entry): Step | undefined {
  const exact = `${entry.key}_${entry.value}`;
  const byValue = level.children.get(exact);
  if (byValue !== undefined) return { node: byValue, via: 'value', composite: exact };
  const wildcard = level.wildcards.find((composite) => exact.startsWith(composite.slice(0, -1)));
  const byWildcard = wildcard === undefined ? undefined : level.children.get(wildcard);
  if (wildcard !== undefined && byWildcard !== undefined) {
    const step = { node: byWildcard, via: 'wildcard', composite: wildcard } as const;
    return byWildcard.shareThreshold ? { ...step, pattern: valuePart(entry.key, wildcard) } : step;
  }
  const byKey = level.children.get(entry.key);
  return byKey === undefined ? undefined : { node: byKey, via: 'key', composite: entry.key };
}

function matchOf(
  domain: string,
  rule: LimitRule,
  entries: readonly Entry[],
  steps: readonly Step[],
): LimitMatch {
  const patterns = steps.map((step) => step.pattern);
  return {
    rule,
    counterKey: counterKey(entries, patterns),
    statsKey: statsKey(domain, rule, entries, steps),
  };
}

/**
 * The reference's per-descriptor stats key. `detailed_metric` names every request value (`key_value`, a shared
 * wildcard's pattern standing for its value); otherwise each level is named as configured, but for the request's
 * value where `value_to_metric` asks for it and a shared wildcard's pattern where one matched.
 */
function statsKey(
  domain: string,
  rule: LimitRule,
  entries: readonly Entry[],
  steps: readonly Step[],
): string {
  const shared = steps.some((step) => step.pattern !== undefined);
  const parts = entries.map((entry, index) => {
    const step = steps[index] as Step;
    if (step.pattern !== undefined) return `${entry.key}_${step.pattern}`;
    if (rule.detailedMetric) return shared ? keyValue(entry.key, entry.value) : `${entry.key}_${entry.value}`;
    if (step.via === 'value' || step.node.valueToMetric) return keyValue(entry.key, entry.value);
    return step.via === 'wildcard' ? `${entry.key}_${valuePart(entry.key, step.composite)}` : entry.key;
  });
  return statsKeyOf(domain, parts);
}

/** A wildcard's composite key less its `key_` (`files_files/*` -> `files/*`), as the reference takes it. */
function valuePart(key: string, composite: string): string {
  return composite.startsWith(`${key}_`) ? composite.slice(key.length + 1) : composite;
}
