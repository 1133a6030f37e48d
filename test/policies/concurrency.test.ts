// Unit tests of the concurrency policy: exact transitions, denial retry times, releases, scaling and its options.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concurrency } from '../../src/index.js';
import type { ConcurrencyState } from '../../src/policies/index.js';
import { pointed } from '../harness/error-pointer.js';
import { result, throwsConfig } from '../harness/policy-helpers.js';

/** Asserts `fn` throws a configuration error for `option` with exactly `message`, then the pointer to its code. */
function refuses(fn: () => unknown, option: string, message: string): void {
  assert.throws(fn, {
    name: 'TollgateError',
    code: 'ERR_TOLLGATE_CONFIG',
    option,
    message: pointed(message),
  });
}

const two = () => concurrency({ max: 2, leaseMs: 1000 });

describe('concurrency: the policy it builds', () => {
  it('advertises max as its limit, no window, the lease as its retention, and cannot be booked ahead', () => {
    const policy = concurrency({ max: 3, leaseMs: '30s' });
    assert.deepEqual(
      {
        kind: policy.kind,
        name: policy.name,
        limit: policy.limit,
        windowMs: policy.windowMs,
        retentionMs: policy.retentionMs,
        reservable: policy.reservable,
        args: policy.args,
        block: policy.block,
        onDenial: policy.onDenial,
      },
      {
        kind: 'concurrency',
        name: 'concurrency',
        limit: 3,
        windowMs: 0,
        retentionMs: 30_000,
        reservable: false,
        args: [3, 30_000],
        block: undefined,
        onDenial: undefined,
      },
    );
    assert.equal(concurrency({ max: 1, leaseMs: 1, name: 'uploads' }).name, 'uploads');
  });

  it('scales max by the share, keeping the name and the lease, and one slot where there was any', () => {
    const policy = concurrency({ max: 10, leaseMs: 5000, name: 'jobs' });
    const half = policy.scale(0.5);
    assert.deepEqual(
      [half.kind, half.name, half.limit, half.retentionMs, half.args],
      ['concurrency', 'jobs', 5, 5000, [5, 5000]],
    );
    assert.deepEqual(policy.scale(0.01).args, [1, 5000]);
    assert.deepEqual(concurrency({ max: 0, leaseMs: 5000 }).scale(0.5).args, [0, 5000]);
    // The scaled policy enforces its own max.
    const held: ConcurrencyState = [
      ['a', 9000],
      ['b', 9000],
      ['c', 9000],
      ['d', 9000],
    ];
    assert.equal(policy.evaluate(held, 0, 1, 'e').result.allowed, true);
    assert.equal(half.evaluate(held, 0, 1, 'e').result.allowed, true);
    assert.equal(half.evaluate([...held, ['e', 9000]], 0, 1, 'f').result.allowed, false);
  });
});

describe('concurrency: options', () => {
  it('must be an object', () => {
    refuses(() => concurrency(null as never), 'options', '`options` must be an object (received null)');
    refuses(() => concurrency(7 as never), 'options', '`options` must be an object (received 7)');
    refuses(
      () => concurrency(undefined as never),
      'options',
      '`options` must be an object (received undefined)',
    );
  });

  it('max: a whole number from 0 to 10,000', () => {
    assert.equal(concurrency({ max: 0, leaseMs: 1 }).limit, 0);
    assert.equal(concurrency({ max: 10_000, leaseMs: 1 }).limit, 10_000);
    refuses(
      () => concurrency({ max: 10_001, leaseMs: 1 }),
      'max',
      '`max` must be at most 10000 (received 10001)',
    );
    for (const max of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2' as never, undefined as never])
      throwsConfig(() => concurrency({ max, leaseMs: 1000 }), 'max');
  });

  it('leaseMs: a positive duration below 2^51 ms', () => {
    assert.equal(concurrency({ max: 1, leaseMs: '2m' }).retentionMs, 120_000);
    assert.equal(concurrency({ max: 1, leaseMs: 2 ** 51 - 1 }).retentionMs, 2 ** 51 - 1);
    refuses(
      () => concurrency({ max: 1, leaseMs: 2 ** 51 }),
      'leaseMs',
      '`leaseMs` must be below 2^51 ms (received 2251799813685248)',
    );
    for (const leaseMs of [0, -1, 1.5, 'soon', undefined])
      throwsConfig(() => concurrency({ max: 1, leaseMs: leaseMs as never }), 'leaseMs');
  });

  it('retryAfterMs: a positive duration below 2^51 ms, 1 s by default, kept when scaled', () => {
    assert.equal(concurrency({ max: 1, leaseMs: 1000 }).retryHintMs, 1000);
    assert.equal(concurrency({ max: 1, leaseMs: 1000, retryAfterMs: '5s' }).retryHintMs, 5000);
    assert.equal(concurrency({ max: 4, leaseMs: 1000, retryAfterMs: 1 }).scale(0.5).retryHintMs, 1);
    assert.equal(concurrency({ max: 1, leaseMs: 1000, retryAfterMs: 2 ** 51 - 1 }).retryHintMs, 2 ** 51 - 1);
    refuses(
      () => concurrency({ max: 1, leaseMs: 1000, retryAfterMs: 2 ** 51 }),
      'retryAfterMs',
      '`retryAfterMs` must be below 2^51 ms (received 2251799813685248)',
    );
    for (const retryAfterMs of [0, -1, 1.5, 'soon'])
      throwsConfig(
        () => concurrency({ max: 1, leaseMs: 1000, retryAfterMs: retryAfterMs as never }),
        'retryAfterMs',
      );
  });

  it('heldMs: until the last lease expires, 0 with none live', () => {
    const policy = two();
    assert.equal(
      policy.heldMs?.(
        [
          ['a', 1500],
          ['b', 1200],
        ],
        1000,
      ),
      500,
    );
    assert.equal(policy.heldMs?.([['a', 900]], 1000), 0);
    assert.equal(policy.heldMs?.([], 1000), 0);
  });

  it('name: checked like every policy name', () => {
    throwsConfig(() => concurrency({ max: 1, leaseMs: 1000, name: 'a b' }), 'name');
    throwsConfig(() => concurrency({ max: 1, leaseMs: 1000, name: '' }), 'name');
  });
});

describe('concurrency: taking slots', () => {
  it('max 2: two leases hold both slots; a third waits for the first lease to expire', () => {
    const policy = two();
    const first = policy.evaluate(undefined, 0, 1, 'a');
    assert.deepEqual(first, { result: result(true, 1, 1000, 0), next: [['a', 1000]], ttlMs: 1000 });
    const second = policy.evaluate(first.next, 100, 1, 'b');
    const both: ConcurrencyState = [
      ['a', 1000],
      ['b', 1100],
    ];
    assert.deepEqual(second, { result: result(true, 0, 1000, 0), next: both, ttlMs: 1000 });
    assert.deepEqual(policy.evaluate(both, 200, 1, 'c'), {
      result: result(false, 0, 900, 800),
      next: undefined,
      ttlMs: 0,
    });
    assert.deepEqual(policy.evaluate(both, 999, 1, 'c').result, result(false, 0, 101, 1));
    // A lease expiring at exactly now no longer holds its slot.
    assert.deepEqual(policy.evaluate(both, 1000, 1, 'c'), {
      result: result(true, 0, 1000, 0),
      next: [
        ['b', 1100],
        ['c', 2000],
      ],
      ttlMs: 1000,
    });
  });

  it('any positive cost takes one slot', () => {
    assert.deepEqual(two().evaluate(undefined, 50, 7, 'a'), {
      result: result(true, 1, 1000, 0),
      next: [['a', 1050]],
      ttlMs: 1000,
    });
  });

  it('a lease taken again replaces its own slot rather than taking a second one', () => {
    const both: ConcurrencyState = [
      ['a', 1000],
      ['b', 1100],
    ];
    assert.deepEqual(two().evaluate(both, 200, 1, 'a'), {
      result: result(true, 0, 1000, 0),
      next: [
        ['b', 1100],
        ['a', 1200],
      ],
      ttlMs: 1000,
    });
  });

  it('without a lease, the slot is held under the empty name', () => {
    const policy = two();
    const first = policy.evaluate(undefined, 0, 1);
    assert.deepEqual(first.next, [['', 1000]]);
    assert.deepEqual(policy.evaluate(first.next, 10, 1, ''), policy.evaluate(first.next, 10, 1));
  });

  it('cost 0 takes no slot and writes nothing, and passes even when every slot is held', () => {
    const both: ConcurrencyState = [
      ['a', 1000],
      ['b', 1100],
      ['gone', 150],
    ];
    assert.deepEqual(two().evaluate(both, 200, 0, 'c'), {
      result: result(true, 0, 900, 0),
      next: undefined,
      ttlMs: 900,
    });
    // Its reset is the live leases', the asking lease's own included (which it would replace, so it counts as free).
    assert.deepEqual(two().evaluate([['a', 500]], 200, 0, 'a'), {
      result: result(true, 2, 300, 0),
      next: undefined,
      ttlMs: 300,
    });
    assert.deepEqual(two().evaluate(undefined, 200, 0, 'a'), {
      result: result(true, 2, 0, 0),
      next: undefined,
      ttlMs: 0,
    });
  });

  it('expired leases are dropped from the state written', () => {
    const state: ConcurrencyState = [
      ['old', 300],
      ['a', 900],
    ];
    assert.deepEqual(two().evaluate(state, 300, 1, 'b'), {
      result: result(true, 0, 1000, 0),
      next: [
        ['a', 900],
        ['b', 1300],
      ],
      ttlMs: 1000,
    });
  });

  it('the reset is until the latest lease ends, which may be later than the new one', () => {
    // A lease written under a longer leaseMs (before a configuration change) outlives the new one.
    assert.deepEqual(two().evaluate([['long', 5000]], 0, 1, 'a'), {
      result: result(true, 0, 5000, 0),
      next: [
        ['long', 5000],
        ['a', 1000],
      ],
      ttlMs: 5000,
    });
  });
});

describe('concurrency: denials', () => {
  /** Every order of the leases. */
  function permutations(items: ConcurrencyState): ConcurrencyState[] {
    if (items.length <= 1) return [items];
    return items.flatMap((item, i) =>
      permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
    );
  }

  it('the retry is when enough leases have expired, whatever order the state lists them in', () => {
    const leases: ConcurrencyState = [
      ['x', 3000],
      ['y', 1000],
      ['z', 2000],
    ];
    for (const state of permutations(leases)) {
      const where = JSON.stringify(state);
      // max 3, all held: the earliest expiry frees the slot needed.
      const three = concurrency({ max: 3, leaseMs: 1000 });
      assert.deepEqual(three.evaluate(state, 400, 1, 'w').result, result(false, 0, 2600, 600), where);
      // max 2 (the state is over it, as after scaling down): two must expire for one more to fit.
      assert.deepEqual(two().evaluate(state, 400, 1, 'w').result, result(false, 0, 2600, 1600), where);
      // ... and one, for a cost-0 request to fit.
      assert.deepEqual(two().evaluate(state, 400, 0, 'w').result, result(false, 0, 2600, 600), where);
      // max 1: the last two must expire.
      const one = concurrency({ max: 1, leaseMs: 1000 });
      assert.deepEqual(one.evaluate(state, 400, 1, 'w').result, result(false, 0, 2600, 2600), where);
    }
  });

  it('the remaining count is never negative when more are held than max', () => {
    const state: ConcurrencyState = [
      ['a', 500],
      ['b', 600],
      ['c', 700],
    ];
    assert.equal(concurrency({ max: 1, leaseMs: 1000 }).evaluate(state, 0, 1, 'd').result.remaining, 0);
    assert.equal(concurrency({ max: 1, leaseMs: 1000 }).evaluate(state, 0, 0, 'd').result.remaining, 0);
  });

  it('the reset counts every live lease, the asking lease included', () => {
    // 'a' asks again while 'b' and 'c' fill max 2: its own lease still holds until 4000.
    const state: ConcurrencyState = [
      ['a', 4000],
      ['b', 2000],
      ['c', 3000],
    ];
    assert.deepEqual(two().evaluate(state, 1000, 1, 'a').result, result(false, 0, 3000, 1000));
  });

  it('max 0 rejects everything with no retry hint, even when leases are left over', () => {
    const none = concurrency({ max: 0, leaseMs: 1000 });
    assert.deepEqual(none.evaluate(undefined, 0, 1, 'a'), {
      result: result(false, 0, 0, -1),
      next: undefined,
      ttlMs: 0,
    });
    assert.deepEqual(none.evaluate(undefined, 0, 0, 'a'), {
      result: result(true, 0, 0, 0),
      next: undefined,
      ttlMs: 0,
    });
    const left: ConcurrencyState = [['a', 5000]];
    assert.deepEqual(none.evaluate(left, 0, 1, 'b').result, result(false, 0, 5000, -1));
    assert.deepEqual(none.evaluate(left, 0, 0, 'b').result, result(false, 0, 5000, -1));
  });
});

describe('concurrency: releasing a slot (refund)', () => {
  const held: ConcurrencyState = [
    ['a', 1000],
    ['b', 1500],
    ['old', 400],
  ];

  it('frees the lease named, drops the expired ones, and is at rest when the last live lease ends', () => {
    const policy = concurrency({ max: 3, leaseMs: 1000 });
    assert.deepEqual(policy.refund(held, 500, 1, 'a', 500), { next: [['b', 1500]], ttlMs: 1000 });
    assert.deepEqual(policy.refund(held, 500, 1, 'b', 500), { next: [['a', 1000]], ttlMs: 500 });
    // The cost does not matter: a release frees the one slot.
    assert.deepEqual(policy.refund(held, 500, 0, 'a', 500), { next: [['b', 1500]], ttlMs: 1000 });
    assert.deepEqual(policy.refund([['a', 1000]], 500, 1, 'a', 500), { next: [], ttlMs: 0 });
  });

  it('a lease that ends at exactly now is dropped, not kept', () => {
    const state: ConcurrencyState = [
      ['a', 1000],
      ['b', 500],
    ];
    assert.deepEqual(two().refund(state, 500, 1, 'a', 500), { next: [], ttlMs: 0 });
  });

  it('changes nothing for an unknown, expired or empty lease, or no state', () => {
    const policy = two();
    assert.equal(policy.refund(held, 500, 1, 'nobody', 500), undefined);
    assert.equal(policy.refund(held, 500, 1, 'old', 500), undefined);
    assert.equal(policy.refund([['a', 500]], 500, 1, 'a', 500), undefined);
    assert.equal(policy.refund(undefined, 500, 1, 'a', 500), undefined);
    // The empty lease names no holder, even where a lease-less request took a slot.
    assert.equal(policy.refund([['', 1000]], 500, 1, '', 500), undefined);
  });

  it('a released slot is free at once', () => {
    const policy = two();
    const full: ConcurrencyState = [
      ['a', 1000],
      ['b', 1100],
    ];
    assert.equal(policy.evaluate(full, 200, 1, 'c').result.allowed, false);
    const freed = policy.refund(full, 200, 0, 'a', 200);
    assert.equal(policy.evaluate(freed?.next, 200, 1, 'c').result.allowed, true);
  });
});
