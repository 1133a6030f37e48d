// Typed reads of a YAML map's fields, each refusal naming the file, the line and the key as written.
import { configErrorAt, inContext, TollgateError } from '../../core/errors.js';
import type { SourcePlace } from './types.js';
import type { YamlEntry, YamlMap, YamlNode } from './yaml-tree.js';

/** A map being read, and the path of keys that leads to it in messages (`rate_limit`, `tollgate.policies[0]`). */
export interface Fields {
  readonly map: YamlMap;
  readonly path: string;
  /** Where the key that holds the map is written: what a message about a missing field points at. */
  readonly place: SourcePlace;
}

export const fieldsOf = (map: YamlMap, path = '', place = map.place): Fields => ({ map, path, place });

/** `path.key`, or `key` at the top. */
export const optionName = (fields: Fields, key: string): string =>
  fields.path === '' ? key : `${fields.path}.${key}`;

export function entryOf(fields: Fields, key: string): YamlEntry | undefined {
  return fields.map.entries.find((entry) => entry.key === key);
}

/** Where `key` is written, else where its map is. */
export function placeOfKey(fields: Fields, key: string): SourcePlace {
  return entryOf(fields, key)?.place ?? fields.place;
}

/** A present, non-null value. */
function presentValue(fields: Fields, key: string): YamlNode | undefined {
  const value = entryOf(fields, key)?.value;
  return value === undefined || (value.kind === 'scalar' && value.value === null) ? undefined : value;
}

/** A string field: '' when absent or empty; any scalar stands as its text, as the reference's YAML reader takes it. */
export function readString(fields: Fields, key: string): string {
  const value = presentValue(fields, key);
  if (value === undefined) return '';
  if (value.kind !== 'scalar')
    throw configErrorAt(value.place, optionName(fields, key), `must be a string, not a ${kindName(value)}`);
  return value.text;
}

/** A string field that must be present and not empty. */
export function requireString(fields: Fields, key: string): string {
  const text = readString(fields, key);
  if (text === '')
    throw configErrorAt(placeOfKey(fields, key), optionName(fields, key), 'must be a non-empty string');
  return text;
}

export function readBoolean(fields: Fields, key: string): boolean {
  const value = presentValue(fields, key);
  if (value === undefined) return false;
  if (value.kind === 'scalar' && typeof value.value === 'boolean') return value.value;
  throw configErrorAt(value.place, optionName(fields, key), 'must be true or false', ...received(value));
}

/** A whole number from 0 to `max`; `fallback` when absent. */
export function readCount(fields: Fields, key: string, max: number, fallback = 0): number {
  const value = presentValue(fields, key);
  if (value === undefined) return fallback;
  if (
    value.kind === 'scalar' &&
    Number.isSafeInteger(value.value) &&
    (value.value as number) >= 0 &&
    (value.value as number) <= max
  ) {
    return value.value as number;
  }
  throw configErrorAt(
    value.place,
    optionName(fields, key),
    `must be a whole number from 0 to ${max}`,
    ...received(value),
  );
}

/** A number of 0 or more (fractions allowed); undefined when absent. */
export function readNumber(fields: Fields, key: string): number | undefined {
  const value = presentValue(fields, key);
  if (value === undefined) return undefined;
  if (
    value.kind === 'scalar' &&
    typeof value.value === 'number' &&
    Number.isFinite(value.value) &&
    value.value >= 0
  ) {
    return value.value;
  }
  throw configErrorAt(
    value.place,
    optionName(fields, key),
    'must be a number of 0 or more',
    ...received(value),
  );
}

/** A list field: empty when absent or null. */
export function readList(fields: Fields, key: string): readonly YamlNode[] {
  const value = presentValue(fields, key);
  if (value === undefined) return [];
  if (value.kind !== 'seq')
    throw configErrorAt(value.place, optionName(fields, key), `must be a list, not a ${kindName(value)}`);
  return value.items;
}

/** A list of maps, one `what` or more, each read by `read` with its path (`key[index]`) for its messages. */
export function readMaps<T>(fields: Fields, key: string, what: string, read: (item: Fields) => T): T[] {
  const items = readList(fields, key);
  if (items.length === 0)
    throw configErrorAt(placeOfKey(fields, key), optionName(fields, key), `must list one ${what} or more`);
  return items.map((item, index) => read(asMap(item, `${optionName(fields, key)}[${index}]`)));
}

/** A map field: undefined when absent or null. */
export function readMap(fields: Fields, key: string): Fields | undefined {
  const value = presentValue(fields, key);
  if (value === undefined) return undefined;
  return asMap(value, optionName(fields, key), placeOfKey(fields, key));
}

/** `node` as a map read under `path`, or the error saying it is not one. */
export function asMap(node: YamlNode, path: string, place = node.place): Fields {
  if (node.kind !== 'map')
    throw configErrorAt(node.place, path, `must be a map, not a ${kindName(node)}`, ...received(node));
  return fieldsOf(node, path, place);
}

/** Refuses any key but `allowed` (Tollgate's own blocks are checked strictly, level by level). */
export function onlyKeys(fields: Fields, allowed: readonly string[]): void {
  for (const entry of fields.map.entries) {
    if (typeof entry.key === 'string' && allowed.includes(entry.key)) continue;
    throw configErrorAt(
      entry.place,
      optionName(fields, String(entry.key)),
      `is not a known key here (known: ${allowed.join(', ')})`,
    );
  }
}

function kindName(node: YamlNode): string {
  return node.kind === 'seq' ? 'list' : node.kind === 'map' ? 'map' : 'scalar';
}

/** What a scalar holds, for the `(received ...)` part of a message; nothing for a collection. */
function received(node: YamlNode): [unknown?] {
  return node.kind === 'scalar' ? [node.value instanceof Date ? node.text : node.value] : [];
}

/**
 * `build()`, its configuration error (a policy's own check, a duration's) said again at `place` and under `path`:
 * `` limits.yaml:9: in `tollgate.policies[0].fixed_window`: `limit` times `windowMs` must stay below 2^51 ``.
 */
export function atPlace<T>(place: SourcePlace, path: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof TollgateError)) throw error;
    const where = path === '' ? '' : `in \`${path}\`: `;
    throw inContext(error, (message) => `${place.file}:${place.line}: ${where}${message}`);
  }
}
