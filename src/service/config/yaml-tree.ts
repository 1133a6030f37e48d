// A YAML file as a small tree that remembers each node's line, so every message can say where its fault is.
import type * as Yaml from 'yaml';
import { configErrorAt } from '../../core/errors.js';
import { optionalPeer } from '../../core/optional-peer.js';
import type { SourcePlace } from './types.js';

/** A scalar as YAML 1.1 resolves it (the reference reads its files with a YAML 1.1 parser). */
type ScalarValue = string | number | boolean | null | Date;

export type YamlNode =
  | { readonly kind: 'map'; readonly entries: readonly YamlEntry[]; readonly place: SourcePlace }
  | { readonly kind: 'seq'; readonly items: readonly YamlNode[]; readonly place: SourcePlace }
  /** `text` is the scalar as written (unquoted), which a string field takes whatever type YAML gave it. */
  | {
      readonly kind: 'scalar';
      readonly value: ScalarValue;
      readonly text: string;
      readonly place: SourcePlace;
    };

export type YamlMap = Extract<YamlNode, { kind: 'map' }>;

export interface YamlEntry {
  /** The key as YAML resolved it: only strings are valid keys. */
  readonly key: ScalarValue;
  readonly value: YamlNode;
  readonly place: SourcePlace;
}

/** Aliases can expand a small file into a huge tree: past this many nodes, the file is refused. */
const MAX_NODES = 100_000;

interface Context {
  readonly yaml: typeof Yaml;
  readonly doc: Yaml.Document.Parsed;
  readonly lines: Yaml.LineCounter;
  readonly file: string;
  nodes: number;
}

/** Parses `text`; a syntax error is thrown with its file and line. An empty file is an empty map. */
export function parseYamlTree(file: string, text: string): YamlNode {
  const yaml = optionalPeer<typeof Yaml>('yaml', 'tollgate serve');
  const lines = new yaml.LineCounter();
  // The reference reads a file's first document only.
  const docs = yaml.parseAllDocuments(text, { lineCounter: lines, version: '1.1', prettyErrors: false });
  const doc = Array.isArray(docs) ? docs[0] : undefined;
  const error = doc?.errors[0];
  if (error !== undefined) {
    const line = lines.linePos(error.pos[0]).line;
    throw configErrorAt({ file, line }, undefined, `is not valid YAML: ${error.message.split('\n')[0]}`);
  }
  if (doc === undefined || doc.contents === null)
    return { kind: 'map', entries: [], place: { file, line: 1 } };
  const context: Context = { yaml, doc, lines, file, nodes: 0 };
  return convert(context, doc.contents);
}

function placeOf(context: Context, node: { range?: Yaml.Range | null | undefined }): SourcePlace {
  const offset = node.range?.[0] ?? 0;
  return { file: context.file, line: Math.max(1, context.lines.linePos(offset).line) };
}

function convert(context: Context, node: unknown): YamlNode {
  const { yaml } = context;
  context.nodes += 1;
  if (context.nodes > MAX_NODES) {
    throw configErrorAt(
      { file: context.file, line: 1 },
      undefined,
      `expands to more than ${MAX_NODES} nodes`,
    );
  }
  if (yaml.isAlias(node)) {
    const target = node.resolve(context.doc);
    if (target === undefined) throw configErrorAt(placeOf(context, node), undefined, 'is an unknown alias');
    return convert(context, target);
  }
  if (yaml.isMap(node)) return convertMap(context, node as Yaml.YAMLMap<unknown, unknown>);
  if (yaml.isSeq(node)) {
    const items = node.items.map((item) => convert(context, item));
    return { kind: 'seq', items, place: placeOf(context, node) };
  }
  const scalar = node as Yaml.Scalar;
  return {
    kind: 'scalar',
    value: scalarValue(scalar.value),
    text: scalarText(scalar),
    place: placeOf(context, scalar),
  };
}

function convertMap(context: Context, map: Yaml.YAMLMap<unknown, unknown>): YamlMap {
  const { yaml } = context;
  const entries: YamlEntry[] = [];
  const merged: YamlEntry[] = [];
  for (const pair of map.items) {
    const keyNode = pair.key as Yaml.Scalar | null;
    const value = convert(context, pair.value ?? new yaml.Scalar(null));
    const place = keyNode === null ? placeOf(context, map) : placeOf(context, keyNode);
    if (keyNode !== null && isMergeKey(keyNode.value)) merged.push(...mergedEntries(value));
    else entries.push({ key: keyNode === null ? null : keyOf(context, keyNode), value, place });
  }
  // A merge key's entries yield to the map's own, as YAML 1.1 says.
  const own = new Set(entries.map((entry) => entry.key));
  const inherited = merged.filter((entry) => !own.has(entry.key) && own.add(entry.key));
  return { kind: 'map', entries: [...entries, ...inherited], place: placeOf(context, map) };
}

function isMergeKey(value: unknown): boolean {
  return value === '<<' || (typeof value === 'symbol' && value.description === '<<');
}

function mergedEntries(value: YamlNode): YamlEntry[] {
  const sources = value.kind === 'seq' ? value.items : [value];
  return sources.flatMap((source) => {
    if (source.kind !== 'map') throw configErrorAt(source.place, '<<', 'must merge a map or a list of maps');
    return source.entries;
  });
}

/** A key that is a collection (`? [a, b]`) cannot be one of a configuration's keys. */
function keyOf(context: Context, key: unknown): ScalarValue {
  if (context.yaml.isScalar(key)) return scalarValue(key.value);
  throw configErrorAt(placeOf(context, key as Yaml.Node), undefined, 'has a key that is a map or a list');
}

function scalarValue(value: unknown): ScalarValue {
  if (value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date || value === null) return value;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}

function scalarText(scalar: Yaml.Scalar): string {
  if (typeof scalar.value === 'string') return scalar.value;
  if (scalar.value === null || scalar.value === undefined) return '';
  return scalar.source ?? String(scalar.value);
}

/** `node` as plain data (a `metadata:` block handed on as written). */
export function plainValue(node: YamlNode): unknown {
  if (node.kind === 'scalar') return node.value instanceof Date ? node.text : node.value;
  if (node.kind === 'seq') return node.items.map(plainValue);
  return Object.fromEntries(node.entries.map((entry) => [String(entry.key), plainValue(entry.value)]));
}
