// The memory store's tables: numbers given while a table exists and reused once it is dropped, each with the policy
// its latest bucket was made for; and a scope's table of a member, made only when missing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedWindow, tokenBucket } from '../../../src/index.js';
import { TableNumbers, tableIn } from '../../../src/stores/memory/tables.js';

describe('TableNumbers', () => {
  const window = fixedWindow({ limit: 1, windowMs: 1000 });
  const bucket = tokenBucket({ capacity: 1, refillPerSecond: 1 });

  it('numbers each table once, from 0, and keeps the policy its latest bucket was made for', () => {
    const numbers = new TableNumbers<Map<string, number>>();
    const [a, b] = [new Map<string, number>(), new Map<string, number>()];
    assert.deepEqual([numbers.of(a, window), numbers.of(b, window), numbers.of(a, bucket)], [0, 1, 0]);
    assert.deepEqual([numbers.table(0), numbers.table(1)], [a, b]);
    assert.deepEqual([numbers.policy(0), numbers.policy(1)], [bucket, window]);
  });

  it('gives a dropped table number to the next new table, and ignores a table never numbered', () => {
    const numbers = new TableNumbers<Map<string, number>>();
    const [a, b, c, never] = [new Map(), new Map(), new Map(), new Map()];
    numbers.of(a, window);
    numbers.of(b, window);
    numbers.drop(never);
    numbers.drop(a);
    assert.equal(numbers.of(c, bucket), 0, 'the freed number');
    assert.deepEqual([numbers.table(0), numbers.policy(0)], [c, bucket]);
    assert.equal(numbers.of(a, window), 2, 'a dropped table is a new one');
    numbers.drop(a);
    numbers.drop(a);
    assert.deepEqual([numbers.of(new Map(), window), numbers.of(new Map(), window)], [2, 3], 'freed once');
  });
});

describe('tableIn', () => {
  it("returns a scope's table of a member, and makes it, and its scope's, only when missing", () => {
    const scopes = new Map<string, Map<string, Map<string, number>>>();
    const made = tableIn(scopes, 'api', 'burst');
    made.set('client', 7);
    assert.equal(tableIn(scopes, 'api', 'burst'), made);
    const other = tableIn(scopes, 'api', 'sustained');
    assert.notEqual(other, made);
    assert.deepEqual([scopes.size, scopes.get('api')?.size, other.size], [1, 2, 0]);
    assert.equal(scopes.get('api')?.get('burst')?.get('client'), 7);
  });
});
