// BucketPool alone: states of each width read back as written with their expiry times, tables, identifiers and places,
// rows are reused, and a pool grows only to its bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AnyPolicy } from '../../../src/policies/policy.js';
import { BucketPool, BucketSlots, KIND_SLOTS } from '../../../src/stores/memory/bucket-pool.js';
import { pointed } from '../../harness/error-pointer.js';

/** A pool of `width` numbers per state. */
const poolOf = (width: number, maxRows: number) => new BucketPool(width, maxRows);

/** What BucketSlots reads of a policy: its kind and how its state packs. */
const WIDTHS: Record<string, number> = {
  'token-bucket': 1,
  'fixed-window': 2,
  'sliding-window': 0,
  'sliding-window-counter': 3,
};
const kind = (name: string, stateWidth = WIDTHS[name] ?? 1) => ({ kind: name, stateWidth }) as AnyPolicy;

describe('BucketPool', () => {
  it('a state of width 1 reads back as the number itself, beside its expiry time', () => {
    const pool = poolOf(1, 10);
    const row = pool.allocate(0, 'id');
    assert.equal(pool.write(row, 42, 1_000), false, 'later than the zero of a fresh row');
    assert.equal(pool.read(row), 42);
    assert.equal(pool.expiresAt(row), 1_000);
  });

  it("knows each row's table and identifier, and whether it is in use, and its place in the queue", () => {
    const pool = poolOf(1, 10);
    const a = pool.allocate(2, 'a');
    const b = pool.allocate(3, 'b');
    assert.deepEqual([pool.tableOf(a), pool.idOf(a), pool.tableOf(b), pool.idOf(b)], [2, 'a', 3, 'b']);
    assert.deepEqual([pool.inUse(a), pool.placeOf(a), pool.placeOf(b)], [true, 0, 0]);
    pool.setPlace(b, -3);
    assert.equal(pool.placeOf(b), -3);
    pool.release(a);
    assert.deepEqual([pool.inUse(a), pool.idOf(a), pool.inUse(b)], [false, undefined, true]);
    assert.equal(pool.allocate(4, 'c'), a);
    assert.deepEqual([pool.inUse(a), pool.tableOf(a), pool.idOf(a)], [true, 4, 'c']);
  });

  it('a state of several numbers reads back as exactly those numbers, in order', () => {
    const pair = poolOf(2, 10);
    const triple = poolOf(3, 10);
    const [p0, p1] = [pair.allocate(1, 'a'), pair.allocate(1, 'b')];
    const [t0, t1] = [triple.allocate(1, 'c'), triple.allocate(1, 'd')];
    pair.write(p0, [5, 7], 100);
    pair.write(p1, [11, 13], 200);
    triple.write(t0, [1, 2, 3], 300);
    triple.write(t1, [4, 5, 6], 400);
    assert.deepEqual(pair.read(p0), [5, 7]);
    assert.deepEqual(pair.read(p1), [11, 13]);
    assert.deepEqual(triple.read(t0), [1, 2, 3]);
    assert.deepEqual(triple.read(t1), [4, 5, 6]);
    assert.deepEqual(
      [pair.expiresAt(p0), pair.expiresAt(p1), triple.expiresAt(t0), triple.expiresAt(t1)],
      [100, 200, 300, 400],
    );
  });

  it('a state of width 0 is kept as given, and a row holds no state it was not given', () => {
    const pool = poolOf(0, 10);
    const log = [10, 20, 30];
    const row = pool.allocate(1, 'a');
    assert.equal(pool.read(row), undefined);
    pool.write(row, log, 500);
    assert.equal(pool.read(row), log);
    assert.equal(pool.expiresAt(row), 500);
    // A released log is not kept alive by its row: the row, handed out again, reads as empty.
    pool.release(row);
    assert.equal(pool.allocate(1, 'b'), row);
    assert.equal(pool.read(row), undefined);
  });

  it('a released row is handed out again before any new one', () => {
    const pool = poolOf(1, 10);
    const rows = [pool.allocate(1, 'a'), pool.allocate(1, 'b'), pool.allocate(1, 'c')];
    assert.deepEqual(rows, [0, 1, 2]);
    pool.release(1);
    assert.equal(pool.allocate(1, 'd'), 1);
    assert.equal(pool.allocate(1, 'e'), 3);
  });

  it('grows past its first 1024 rows up to its bound, keeping every state, time and place, and no further', () => {
    const pool = poolOf(2, 2_500);
    for (let i = 0; i < 2_500; i++) {
      const row = pool.allocate(1, `c${i}`);
      assert.equal(row, i);
      pool.write(row, [i, 2 * i], 3 * i);
      pool.setPlace(row, -1 - i);
    }
    for (const row of [0, 1_023, 1_024, 2_047, 2_048, 2_499]) {
      assert.deepEqual(pool.read(row), [row, 2 * row]);
      assert.deepEqual([pool.expiresAt(row), pool.placeOf(row)], [3 * row, -1 - row]);
      assert.deepEqual([pool.idOf(row), pool.tableOf(row)], [`c${row}`, 1]);
    }
    assert.throws(() => pool.allocate(1, 'one too many'), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: pointed('`maxBuckets` is below the buckets one request needs (2500)'),
    });
  });

  it('a small bound is the whole pool from the start', () => {
    const pool = poolOf(1, 2);
    pool.allocate(1, 'a');
    pool.allocate(1, 'b');
    assert.throws(() => pool.allocate(1, 'c'), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: pointed('`maxBuckets` is below the buckets one request needs (2)'),
    });
  });
});

describe('BucketSlots', () => {
  it("tells a bucket's kind from its slot, and keeps each kind's rows apart", () => {
    const slots = new BucketSlots(10);
    const bucket = slots.allocate(kind('token-bucket'), 1, 'a');
    const window = slots.allocate(kind('fixed-window'), 2, 'b');
    const log = slots.allocate(kind('sliding-window'), 3, 'c');
    const counter = slots.allocate(kind('sliding-window-counter'), 4, 'd');
    assert.ok(slots.holds(bucket, 'token-bucket'));
    assert.ok(!slots.holds(bucket, 'fixed-window'));
    assert.ok(slots.holds(window, 'fixed-window'));
    assert.ok(!slots.holds(window, 'sliding-window'));
    assert.ok(slots.holds(log, 'sliding-window'));
    assert.ok(slots.holds(counter, 'sliding-window-counter'));
    slots.write(bucket, 9, 10);
    slots.write(window, [1, 2], 20);
    slots.write(log, [3], 30);
    slots.write(counter, [4, 5, 6], 40);
    assert.deepEqual(
      [slots.read(bucket), slots.read(window), slots.read(log), slots.read(counter)],
      [9, [1, 2], [3], [4, 5, 6]],
    );
    assert.deepEqual(
      [bucket, window, log, counter].map((slot) => slots.expiresAt(slot)),
      [10, 20, 30, 40],
    );
    assert.deepEqual(
      [slots.write(bucket, 8, 15), slots.write(bucket, 8, 12)],
      [false, true],
      'earlier than before',
    );
    slots.setPlace(counter, 4);
    assert.deepEqual([slots.placeOf(counter), slots.placeOf(log)], [4, 0]);
    assert.deepEqual(
      [bucket, window, log, counter].map((slot) => `${slots.tableOf(slot)}|${slots.idOf(slot)}`),
      ['1|a', '2|b', '3|c', '4|d'],
    );
    slots.release(log);
    assert.equal(slots.allocate(kind('sliding-window'), 3, 'e'), log);
  });

  it('names each kind apart in a slot, the kinds numbered as they come, and refuses one kind too many', () => {
    const kinds = Array.from({ length: KIND_SLOTS }, (_, i) => kind(`kind-${i}`, i % 4));
    const slots = new BucketSlots(3);
    // The second row of each kind too: a tag too narrow shows as a row of one kind read as another.
    const held = kinds.flatMap((policy) =>
      [slots.allocate(policy, 0, 'a'), slots.allocate(policy, 0, 'b')].map((slot) => ({ policy, slot })),
    );
    for (const { policy, slot } of held)
      assert.deepEqual(
        kinds.filter((other) => slots.holds(slot, other.kind)),
        [policy],
      );
    assert.equal(new Set(held.map(({ slot }) => slot)).size, held.length);
    assert.throws(() => slots.admit([kind('one-too-many')]), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: /^`policy` is of a kind too many: a MemoryStore holds at most 8 kinds/,
    });
    // A kind met before is no kind too many, unless its state is packed otherwise.
    slots.admit(kinds);
    assert.throws(() => slots.admit([kind('kind-1', 2)]), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: /^`policy` of kind "kind-1" packs its state unlike another of its kind \(received 2\)/,
    });
  });
});
