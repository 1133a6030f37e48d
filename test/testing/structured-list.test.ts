// The adapter contract's Structured Field list reader agrees with the structured-headers package, and is as strict.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseList as reference, Token } from 'structured-headers';
import { parseList } from '../../src/testing/structured-list.js';

/** The reference's reading, with its tokens as the reader's `{ token }`. */
function expected(field: string): unknown {
  const plain = (item: unknown) => (item instanceof Token ? { token: item.toString() } : item);
  return reference(field).map(([item, parameters]) => [
    plain(item),
    new Map([...parameters].map(([key, value]) => [key, plain(value)])),
  ]);
}

it('reads what the draft-10 headers send as the reference does', () => {
  for (const field of [
    '"token-bucket";q=3;w=3, "min";q=5;w=60',
    '"token-bucket";r=2;t=1,"min";r=4;t=60',
    '"a\\"b\\\\c";q=0',
    'tok/en:x;flag;n=-12;d=1.5;s="x";b=?0',
    '',
  ])
    assert.deepEqual(parseList(field), expected(field), field);
});

it('refuses what the reference refuses', () => {
  for (const field of ['"open', '"a";q=', '"a",', '"a" "b"', '"a";Q=1', '1.2345', '"a";q=1.']) {
    assert.throws(() => reference(field), field);
    assert.throws(() => parseList(field), SyntaxError, field);
  }
});
