// BucketPool alone: states of each width read back as written, rows are reused, and a pool grows only to its bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BucketPool, BucketSlots, KIND_SLOTS, KINDS } from '../../src/stores/bucket-pool.js';

describe('BucketPool', () => {
  it('a state of width 1 reads back as the number itself, beside its expiry time', () => {
    const pool = new BucketPool(1, 10);
    const row = pool.allocate();
    pool.write(row, 42, 1_000);
    assert.equal(pool.read(row), 42);
    assert.equal(pool.expiresAt(row), 1_000);
  });

  it('a state of several numbers reads back as exactly those numbers, in order', () => {
    const pair = new BucketPool(2, 10);
    const triple = new BucketPool(3, 10);
    const [p0, p1] = [pair.allocate(), pair.allocate()];
    const [t0, t1] = [triple.allocate(), triple.allocate()];
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
    const pool = new BucketPool(0, 10);
    const log = [10, 20, 30];
    const row = pool.allocate();
    assert.equal(pool.read(row), undefined);
    pool.write(row, log, 500);
    assert.equal(pool.read(row), log);
    assert.equal(pool.expiresAt(row), 500);
    // A released log is not kept alive by its row: the row, handed out again, reads as empty.
    pool.release(row);
    assert.equal(pool.allocate(), row);
    assert.equal(pool.read(row), undefined);
  });

  it('a released row is handed out again before any new one', () => {
    const pool = new BucketPool(1, 10);
    const rows = [pool.allocate(), pool.allocate(), pool.allocate()];
    assert.deepEqual(rows, [0, 1, 2]);
    pool.release(1);
    assert.equal(pool.allocate(), 1);
    assert.equal(pool.allocate(), 3);
  });

  it('a row read since the hand last passed gets one second chance', () => {
    const pool = new BucketPool(1, 10);
    const row = pool.allocate();
    pool.write(row, 1, 1);
    assert.equal(pool.takeSecondChance(row), false);
    pool.read(row);
    assert.equal(pool.takeSecondChance(row), true);
    assert.equal(pool.takeSecondChance(row), false);
  });

  it('grows past its first 1024 rows up to its bound, keeping every state, and no further', () => {
    const pool = new BucketPool(2, 2_500);
    for (let i = 0; i < 2_500; i++) {
      const row = pool.allocate();
      assert.equal(row, i);
      pool.write(row, [i, 2 * i], 3 * i);
    }
    for (const row of [0, 1_023, 1_024, 2_047, 2_048, 2_499]) {
      assert.deepEqual(pool.read(row), [row, 2 * row]);
      assert.equal(pool.expiresAt(row), 3 * row);
    }
    assert.throws(() => pool.allocate(), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: '`maxBuckets` is below the buckets one request needs (2500)',
    });
  });

  it('a small bound is the whole pool from the start', () => {
    const pool = new BucketPool(1, 2);
    pool.allocate();
    pool.allocate();
    assert.throws(() => pool.allocate(), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: '`maxBuckets` is below the buckets one request needs (2)',
    });
  });
});

describe('BucketSlots', () => {
  it("tells a bucket's kind from its slot, and keeps each kind's rows apart", () => {
    const slots = new BucketSlots(10);
    const bucket = slots.allocate('token-bucket');
    const window = slots.allocate('fixed-window');
    const log = slots.allocate('sliding-window');
    const counter = slots.allocate('sliding-window-counter');
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
    assert.equal(slots.takeSecondChance(log), true);
    slots.release(log);
    assert.equal(slots.allocate('sliding-window'), log);
  });

  it('names every policy kind apart in a slot, with room left for the kinds to come', () => {
    assert.ok(KINDS.length <= KIND_SLOTS, `${KINDS.length} kinds need more than ${KIND_SLOTS} slot tags`);
    const slots = new BucketSlots(3);
    // The second row of each kind too: a tag too narrow shows as a row of one kind read as another.
    const held = KINDS.flatMap((kind) =>
      [slots.allocate(kind), slots.allocate(kind)].map((slot) => ({ kind, slot })),
    );
    for (const { kind, slot } of held)
      assert.deepEqual(
        KINDS.filter((other) => slots.holds(slot, other)),
        [kind],
      );
    assert.equal(new Set(held.map(({ slot }) => slot)).size, held.length);
  });
});
