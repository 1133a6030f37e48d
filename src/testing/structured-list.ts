// A strict reader of Structured Field lists (RFC 9651), enough to hold the draft-10 headers to the syntax without a
// dependency the published kit would have to bring.

/** A token, kept apart from a string: `"a"` and `a` are different items. */
interface Token {
  readonly token: string;
}

type BareItem = string | number | boolean | Token;
type ListItem = readonly [item: BareItem, parameters: ReadonlyMap<string, BareItem>];

const KEY = /^[a-z*][a-z0-9_\-.*]*/;
const TOKEN = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/;
const DECIMAL = /^-?\d{1,12}\.\d{1,3}(?![\d.])/;
const INTEGER = /^-?\d{1,15}(?![\d.])/;
const STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"/;

/** Parses a List of Items (inner lists are not used by the headers, so they are refused); throws on bad syntax. */
export function parseList(field: string): ListItem[] {
  const reader = { rest: field.replace(/^ +| +$/g, '') };
  const items: ListItem[] = [];
  while (reader.rest !== '') {
    items.push([bareItem(reader), parameters(reader)]);
    reader.rest = reader.rest.replace(/^[ \t]*/, '');
    if (reader.rest === '') break;
    expect(reader, /^,[ \t]*/, 'a comma between items');
    if (reader.rest === '') throw new SyntaxError(`a trailing comma in ${JSON.stringify(field)}`);
  }
  return items;
}

function parameters(reader: { rest: string }): Map<string, BareItem> {
  const found = new Map<string, BareItem>();
  while (reader.rest.startsWith(';')) {
    reader.rest = reader.rest.slice(1).replace(/^ */, '');
    const key = expect(reader, KEY, 'a parameter key');
    const value = reader.rest.startsWith('=') ? bareItem({ rest: reader.rest.slice(1) }, reader) : true;
    found.set(key, value);
  }
  return found;
}

/** Reads one bare item off `reader` (or off `from`, then leaves what is left in `reader`). */
function bareItem(from: { rest: string }, reader = from): BareItem {
  const at = { rest: from.rest };
  let item: BareItem;
  if (at.rest.startsWith('"')) item = expect(at, STRING, 'a string', 1).replace(/\\(["\\])/g, '$1');
  else if (at.rest.startsWith('?')) item = expect(at, /^\?([01])/, 'a boolean', 1) === '1';
  else if (DECIMAL.test(at.rest)) item = Number(expect(at, DECIMAL, 'a decimal'));
  else if (INTEGER.test(at.rest)) item = Number(expect(at, INTEGER, 'an integer'));
  else item = { token: expect(at, TOKEN, 'an item') };
  reader.rest = at.rest;
  return item;
}

/** Takes `pattern` off the front of `reader` and returns its match (or its `group`), or throws naming `what`. */
function expect(reader: { rest: string }, pattern: RegExp, what: string, group = 0): string {
  const match = pattern.exec(reader.rest);
  if (match === null) throw new SyntaxError(`expected ${what} at ${JSON.stringify(reader.rest)}`);
  reader.rest = reader.rest.slice(match[0].length);
  return match[group] ?? '';
}
