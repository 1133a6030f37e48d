// Unit tests of the lockout pseudo-policy: open or denying until a time, extended by block(), started by a denial.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOCKOUT_NAME, lockedOut, lockout } from '../../src/policies/lockout.js';
import { result } from '../harness/policy-helpers.js';

const OPEN = result(true, 1, 0, 0);

describe('lockout: the policy it builds', () => {
  it('is named outside the policy names, advertises nothing, is kept blockMs and can be booked ahead', () => {
    assert.equal(LOCKOUT_NAME, '!lockout');
    const policy = lockout(1000);
    assert.deepEqual(
      {
        kind: policy.kind,
        name: policy.name,
        limit: policy.limit,
        windowMs: policy.windowMs,
        retentionMs: policy.retentionMs,
        reservable: policy.reservable,
        args: policy.args,
      },
      {
        kind: 'lockout',
        name: '!lockout',
        limit: 0,
        windowMs: 0,
        retentionMs: 1000,
        reservable: true,
        args: [1000],
      },
    );
  });

  it('holds a promise until the block ends: heldMs', () => {
    const policy = lockout(1000);
    assert.equal(policy.heldMs?.(5000, 4000), 1000);
    assert.equal(policy.heldMs?.(5000, 5000), 0);
    assert.equal(policy.heldMs?.(5000, 6000), 0);
  });

  it('scaling changes nothing: a block is a block on every instance', () => {
    const scaled = lockout(1000).scale(0.25);
    assert.deepEqual([scaled.kind, scaled.retentionMs, scaled.args], ['lockout', 1000, [1000]]);
    assert.deepEqual(scaled.onDenial?.(undefined, 500)?.next, 1500);
  });
});

describe('lockout: evaluate', () => {
  it('lets everything through with no block, or once the block has ended (at exactly its end too)', () => {
    const policy = lockout(1000);
    for (const until of [undefined, 0, 499, 500]) {
      const t = policy.evaluate(until, 500, 1);
      assert.deepEqual(t, { result: OPEN, next: undefined, ttlMs: 0 }, `until ${until}`);
      assert.ok(Object.isFrozen(t.result));
    }
  });

  it('denies any cost until the block ends, and writes nothing', () => {
    const policy = lockout(1000);
    assert.deepEqual(policy.evaluate(501, 500, 1), {
      result: result(false, 0, 1, 1),
      next: undefined,
      ttlMs: 1,
    });
    assert.deepEqual(policy.evaluate(2000, 500, 0), {
      result: result(false, 0, 1500, 1500),
      next: undefined,
      ttlMs: 1500,
    });
    assert.deepEqual(policy.evaluate(2000, 500, 7).result, result(false, 0, 1500, 1500));
  });

  it('refunds nothing', () => {
    assert.equal(lockout(1000).refund(2000, 500, 1, 'a', 500), undefined);
    assert.equal(lockout(1000).refund(undefined, 500, 1, '', 500), undefined);
  });
});

describe('lockout: block', () => {
  const policy = lockout(0);
  const block = (until: number | undefined, nowMs: number, ms: number) => policy.block?.(until, nowMs, ms);

  it('blocks for ms from now when nothing (or an ended block) is in force', () => {
    assert.deepEqual(block(undefined, 500, 1000), { next: 1500, ttlMs: 1000 });
    assert.deepEqual(block(400, 500, 1000), { next: 1500, ttlMs: 1000 });
  });

  it('extends a shorter block and never shortens a longer one', () => {
    assert.deepEqual(block(1499, 500, 1000), { next: 1500, ttlMs: 1000 });
    assert.equal(block(1500, 500, 1000), undefined);
    assert.equal(block(3000, 500, 1000), undefined);
  });
});

describe('lockout: onDenial', () => {
  it('blockMs > 0: starts a block of blockMs from now, written, and denies with its figures', () => {
    const policy = lockout(1000);
    const expected = { result: result(false, 0, 1000, 1000), next: 1500, ttlMs: 1000 };
    assert.deepEqual(policy.onDenial?.(undefined, 500), expected);
    assert.deepEqual(policy.onDenial?.(400, 500), expected);
  });

  it('blockMs 0: starts nothing; a block already in force stays as it is, unwritten', () => {
    const policy = lockout(0);
    assert.deepEqual(policy.onDenial?.(undefined, 500), { result: OPEN, next: undefined, ttlMs: 0 });
    assert.deepEqual(policy.onDenial?.(2000, 500), {
      result: result(false, 0, 1500, 1500),
      next: undefined,
      ttlMs: 1500,
    });
  });
});

describe('lockedOut: what a locked-out client is told of one of its policies', () => {
  it('nothing left, and no rest nor retry before the block ends', () => {
    assert.deepEqual(lockedOut(result(true, 3, 100, 0), 5000), result(false, 0, 5000, 5000));
  });

  it("keeps the policy's own rest and retry when they come later than the block's end", () => {
    assert.deepEqual(lockedOut(result(false, 2, 8000, 7000), 5000), result(false, 0, 8000, 7000));
  });

  it('keeps -1: when waiting can never help, the block does not change that', () => {
    assert.deepEqual(lockedOut(result(false, 2, -1, -1), 5000), result(false, 0, -1, -1));
  });
});
