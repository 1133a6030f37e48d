// The reference's check of a file's keys: one flat set of known keys at every depth, list items maps, plain leaves.
import { configErrorAt } from '../../core/errors.js';
import type { YamlNode } from './yaml-tree.js';

/**
 * Every key the reference knows, wherever it is written: a known key at an unexpected level is ignored, as the
 * reference ignores it, so its files load unchanged. `metadata` holds free-form keys.
 */
const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'domain',
  'key',
  'value',
  'descriptors',
  'rate_limit',
  'unit',
  'requests_per_unit',
  'unlimited',
  'shadow_mode',
  'name',
  'replaces',
  'detailed_metric',
  'value_to_metric',
  'share_threshold',
  'quota_mode',
  'metadata',
]);

/** Keys whose contents this walk leaves to their own reader. */
const OPAQUE = new Set(['metadata', 'tollgate']);

/**
 * Refuses what the reference refuses before reading a file's fields: a key that is not a string, an unknown key, a
 * list item that is not a map, a leaf that is not a string, a whole number, a boolean or empty. `tollgate` is known
 * at the top and on a descriptor only; its block is checked by its own reader.
 */
export function checkReferenceKeys(root: YamlNode): void {
  walk(root, 'domain', true);
}

function walk(node: YamlNode, key: string, tollgateHere: boolean): void {
  if (node.kind === 'seq') {
    for (const item of node.items) {
      if (item.kind !== 'map') {
        const got = item.kind === 'scalar' ? [item.text] : [];
        throw configErrorAt(item.place, key, 'must list maps only', ...got);
      }
      walk(item, key, key === 'descriptors');
    }
    return;
  }
  if (node.kind === 'scalar') {
    if (typeof node.value === 'number' && !Number.isInteger(node.value)) {
      throw configErrorAt(node.place, key, 'must be a string, a whole number, true or false', node.value);
    }
    return;
  }
  for (const entry of node.entries) {
    const name = entry.key;
    if (typeof name !== 'string') {
      throw configErrorAt(entry.place, undefined, 'has a key that is not a string', name);
    }
    const known = KNOWN_KEYS.has(name) || (name === 'tollgate' && tollgateHere);
    if (!known) throw configErrorAt(entry.place, name, `is not a known key${suggestion(name)}`);
    if (!OPAQUE.has(name)) walk(entry.value, name, false);
  }
}

/** `ratelimit` -> ` (did you mean \`rate_limit\`?)`: the same key but for case, `_` and `-`. */
function suggestion(name: string): string {
  const plain = (text: string) => text.toLowerCase().replace(/[-_]/g, '');
  const match = [...KNOWN_KEYS, 'tollgate'].find((known) => known !== name && plain(known) === plain(name));
  return match === undefined ? '' : ` (did you mean \`${match}\`?)`;
}
