// A domain's descriptors as the reference keeps them: per level, children by composite key and wildcards in order.
import { configErrorAt } from '../../core/errors.js';
import { type RulePath, readRule } from './descriptor-rule.js';
import { asMap, placeOfKey, readBoolean, readList, readString } from './fields.js';
import { keyValue } from './keys.js';
import type { LimitRule, SourcePlace } from './types.js';
import type { YamlNode } from './yaml-tree.js';

export interface DescriptorNode {
  /** By composite key: `key_value`, or `key` alone for a descriptor without a value. */
  readonly children: Map<string, DescriptorNode>;
  /** The composite keys among the children that end in `*`, in load order: the order they are tried in. */
  readonly wildcards: string[];
  readonly rule: LimitRule | undefined;
  /** A wildcard whose matching values all count as one. */
  readonly shareThreshold: boolean;
  /** Stats name the request's value at this level rather than the configured key. */
  readonly valueToMetric: boolean;
  readonly place: SourcePlace;
}

/** A domain's root: a level with no limit of its own. */
export function domainRoot(place: SourcePlace): DescriptorNode {
  return {
    children: new Map(),
    wildcards: [],
    rule: undefined,
    shareThreshold: false,
    valueToMetric: false,
    place,
  };
}

/** Adds `items` (a `descriptors:` list) under `parent`, at `path` in `domain`, refusing what the reference refuses. */
export function addDescriptors(
  parent: DescriptorNode,
  items: readonly YamlNode[],
  domain: string,
  path: readonly string[],
): void {
  for (const item of items) {
    const fields = asMap(item, '');
    const key = readString(fields, 'key');
    if (key === '') throw configErrorAt(placeOfKey(fields, 'key'), 'key', 'must be a non-empty string');
    const composite = keyValue(key, readString(fields, 'value'));
    const where: RulePath = {
      domain,
      path: [...path, composite],
      fullKey: [domain, ...path, composite].join('.'),
    };
    const first = parent.children.get(composite);
    if (first !== undefined) {
      const at = `${first.place.file}:${first.place.line}`;
      throw configErrorAt(
        fields.map.place,
        'key',
        `makes a duplicate descriptor composite key '${where.fullKey}' (first at ${at})`,
      );
    }
    const rule = readRule(fields, where);
    const shareThreshold = readBoolean(fields, 'share_threshold');
    if (shareThreshold && !composite.endsWith('*')) {
      throw configErrorAt(
        placeOfKey(fields, 'share_threshold'),
        'share_threshold',
        `needs a wildcard \`value\` ending in '*' (the key is '${composite}')`,
      );
    }
    const node: DescriptorNode = {
      children: new Map(),
      wildcards: [],
      rule,
      shareThreshold,
      valueToMetric: readBoolean(fields, 'value_to_metric'),
      place: fields.map.place,
    };
    if (composite.endsWith('*')) parent.wildcards.push(composite);
    parent.children.set(composite, node);
    addDescriptors(node, readList(fields, 'descriptors'), domain, where.path);
  }
}
