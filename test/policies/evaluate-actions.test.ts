// Unit tests of evaluatePolicies' actions: consume, peek, refund and block, leases, the lockout's start on a denial,
// and booking an admission ahead (maxDelayMs), with every result and write stated by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AnyPolicy,
  concurrency,
  fixedWindow,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';
import { lockout } from '../../src/policies/lockout.js';
import { evaluatePolicies, type PolicyResult } from '../../src/stores/index.js';
import { result } from '../harness/policy-helpers.js';

// Two tokens, one back per second (tat in µs): 2,000,000 at 0 is an empty bucket whose next token comes at 1000.
const bucket = () => tokenBucket({ capacity: 2, refillPerSecond: 1 });
const EMPTY_AT_0 = 2_000_000;
const NOTHING = { next: undefined, ttlMs: 0 };
const OPEN = result(true, 1, 0, 0);
const FULL_BUCKET = result(true, 2, 0, 0);

/** A transition as a store write, result included (the writes of a plain consume are the transitions). */
const written = (r: PolicyResult, next: unknown, ttlMs: number) => ({ result: r, next, ttlMs });

describe('evaluatePolicies: consume and peek', () => {
  it('an admitted consume writes every transition; the lease names the slot taken', () => {
    const slots = concurrency({ max: 1, leaseMs: 1000 });
    assert.deepEqual(
      evaluatePolicies([bucket(), slots], [undefined, undefined], 0, {
        action: 'consume',
        cost: 1,
        lease: 'a',
      }),
      {
        allowed: true,
        results: [result(true, 1, 1000, 0), result(true, 0, 1000, 0)],
        writes: [
          written(result(true, 1, 1000, 0), 1_000_000, 1000),
          written(result(true, 0, 1000, 0), [['a', 1000]], 1000),
        ],
        delayMs: 0,
      },
    );
  });

  it('without a lease, the slot is taken under the empty name', () => {
    const slots = concurrency({ max: 1, leaseMs: 1000 });
    const evaluation = evaluatePolicies([slots], [undefined], 0, { action: 'consume', cost: 1 });
    assert.deepEqual(evaluation.writes, [written(result(true, 0, 1000, 0), [['', 1000]], 1000)]);
  });

  it('an admitted peek answers the same as a consume and writes nothing', () => {
    assert.deepEqual(evaluatePolicies([bucket()], [undefined], 0, { action: 'peek', cost: 1 }), {
      allowed: true,
      results: [result(true, 1, 1000, 0)],
      writes: [],
      delayMs: 0,
    });
  });

  it('a consume of cost 0 writes nothing (it must not open a window)', () => {
    assert.deepEqual(
      evaluatePolicies([bucket(), fixedWindow({ limit: 2, windowMs: 1000 })], [undefined, undefined], 0, {
        action: 'consume',
        cost: 0,
      }),
      { allowed: true, results: [FULL_BUCKET, result(true, 2, 0, 0)], writes: [], delayMs: 0 },
    );
  });

  it("a concurrency limit's unspent view leaves out the request's own lease, which it would replace", () => {
    const policies = [fixedWindow({ limit: 1, windowMs: 1000 }), concurrency({ max: 2, leaseMs: 1000 })];
    const states = [[0, 1], [['a', 1000]]];
    assert.deepEqual(
      evaluatePolicies(policies, states, 0, { action: 'consume', cost: 1, lease: 'a' }).results,
      [result(false, 0, 1000, 1000), result(true, 2, 1000, 0)],
    );
    assert.deepEqual(
      evaluatePolicies(policies, states, 0, { action: 'consume', cost: 1, lease: 'b' }).results,
      [result(false, 0, 1000, 1000), result(true, 1, 1000, 0)],
    );
  });

  it('a denial writes nothing, and a policy that would have admitted shows its unspent view', () => {
    const window = fixedWindow({ limit: 2, windowMs: 1000 });
    assert.deepEqual(
      evaluatePolicies([bucket(), window], [undefined, [0, 2]], 500, { action: 'consume', cost: 1 }),
      {
        allowed: false,
        results: [FULL_BUCKET, result(false, 0, 500, 500)],
        writes: [],
        delayMs: 0,
      },
    );
  });
});

describe('evaluatePolicies: a lockout starts on a plain consume denied by the other policies', () => {
  const policies = () => [bucket(), lockout(5000)];

  it('consume denied by the bucket: the open lockout starts its block, with its figures, and is written', () => {
    const blocked = result(false, 0, 5000, 5000);
    assert.deepEqual(
      evaluatePolicies(policies(), [EMPTY_AT_0, undefined], 0, { action: 'consume', cost: 1 }),
      {
        allowed: false,
        results: [result(false, 0, 2000, 1000), blocked],
        writes: [NOTHING, written(blocked, 5000, 5000)],
        delayMs: 0,
      },
    );
  });

  it('wherever the lockout stands in the list', () => {
    const blocked = result(false, 0, 5000, 5000);
    assert.deepEqual(
      evaluatePolicies([lockout(5000), bucket()], [undefined, EMPTY_AT_0], 100, {
        action: 'consume',
        cost: 1,
      }),
      {
        allowed: false,
        results: [blocked, result(false, 0, 1900, 900)],
        writes: [written(blocked, 5100, 5000), NOTHING],
        delayMs: 0,
      },
    );
  });

  it('a lockout of blockMs 0 starts nothing, and writes nothing', () => {
    assert.deepEqual(
      evaluatePolicies([bucket(), lockout(0)], [EMPTY_AT_0, undefined], 0, { action: 'consume', cost: 1 }),
      {
        allowed: false,
        results: [result(false, 0, 2000, 1000), OPEN],
        writes: [NOTHING, written(OPEN, undefined, 0)],
        delayMs: 0,
      },
    );
  });

  it('not when the lockout itself denied: its block stands, unwritten', () => {
    assert.deepEqual(evaluatePolicies(policies(), [undefined, 3000], 0, { action: 'consume', cost: 1 }), {
      allowed: false,
      results: [FULL_BUCKET, result(false, 0, 3000, 3000)],
      writes: [],
      delayMs: 0,
    });
  });

  it('not on a peek', () => {
    assert.deepEqual(
      evaluatePolicies(policies(), [EMPTY_AT_0, undefined], 0, { action: 'peek', cost: 1, maxDelayMs: 5000 }),
      { allowed: false, results: [result(false, 0, 2000, 1000), OPEN], writes: [], delayMs: 0 },
    );
  });

  it('not for a waiting caller (maxDelayMs > 0) whose request cannot be booked', () => {
    // Too far ahead to book ...
    assert.deepEqual(
      evaluatePolicies(policies(), [EMPTY_AT_0, undefined], 0, {
        action: 'consume',
        cost: 1,
        maxDelayMs: 999,
      }),
      { allowed: false, results: [result(false, 0, 2000, 1000), OPEN], writes: [], delayMs: 0 },
    );
    // ... or never: a cost above the capacity.
    assert.deepEqual(
      evaluatePolicies(policies(), [undefined, undefined], 0, {
        action: 'consume',
        cost: 3,
        maxDelayMs: 1e9,
      }),
      { allowed: false, results: [result(false, 2, 0, -1), OPEN], writes: [], delayMs: 0 },
    );
  });
});

describe('evaluatePolicies: booking an admission ahead (maxDelayMs)', () => {
  it('books at the retry time when it is within maxDelayMs, shifting the TTLs by the delay', () => {
    // Admitted at 1000 with tat 3,000,000 µs, full again at 3000: 2000 ms after the booked instant.
    const booked = {
      allowed: true,
      results: [result(true, 0, 2000, 0)],
      writes: [{ next: 3_000_000, ttlMs: 3000 }],
      delayMs: 1000,
    };
    const consume = (maxDelayMs: number) =>
      evaluatePolicies([bucket()], [EMPTY_AT_0], 0, { action: 'consume', cost: 1, maxDelayMs });
    assert.deepEqual(consume(1000), booked);
    assert.deepEqual(consume(60_000), booked);
    assert.deepEqual(consume(999), {
      allowed: false,
      results: [result(false, 0, 2000, 1000)],
      writes: [],
      delayMs: 0,
    });
  });

  it('an admission that needs no wait is a plain one: its transitions written, no delay', () => {
    const consume = (cost: number) =>
      evaluatePolicies([bucket(), lockout(5000)], [undefined, undefined], 0, {
        action: 'consume',
        cost,
        maxDelayMs: 60_000,
      });
    assert.deepEqual(consume(1), {
      allowed: true,
      results: [result(true, 1, 1000, 0), OPEN],
      writes: [written(result(true, 1, 1000, 0), 1_000_000, 1000), written(OPEN, undefined, 0)],
      delayMs: 0,
    });
    assert.deepEqual(consume(0), { allowed: true, results: [FULL_BUCKET, OPEN], writes: [], delayMs: 0 });
  });

  it('an open lockout is booked with the rest: its empty write is shifted too', () => {
    assert.deepEqual(
      evaluatePolicies([bucket(), lockout(5000)], [EMPTY_AT_0, undefined], 0, {
        action: 'consume',
        cost: 1,
        maxDelayMs: 1000,
      }),
      {
        allowed: true,
        results: [result(true, 0, 2000, 0), OPEN],
        writes: [
          { next: 3_000_000, ttlMs: 3000 },
          { next: undefined, ttlMs: 1000 },
        ],
        delayMs: 1000,
      },
    );
  });

  it('the delay is the longest retry: a block ending later than the bucket refills', () => {
    assert.deepEqual(
      evaluatePolicies([bucket(), lockout(5000)], [undefined, 1500], 0, {
        action: 'consume',
        cost: 1,
        maxDelayMs: 2000,
      }),
      {
        allowed: true,
        results: [result(true, 1, 1000, 0), OPEN],
        writes: [
          { next: 2_500_000, ttlMs: 2500 },
          { next: undefined, ttlMs: 1500 },
        ],
        delayMs: 1500,
      },
    );
  });

  it('a TTL of -1 (a bucket that never refills) stays -1', () => {
    const frozen = tokenBucket({ capacity: 3, refillPerSecond: 0 });
    assert.deepEqual(
      evaluatePolicies([frozen, bucket()], [undefined, EMPTY_AT_0], 0, {
        action: 'consume',
        cost: 1,
        maxDelayMs: 1000,
      }),
      {
        allowed: true,
        results: [result(true, 2, -1, 0), result(true, 0, 2000, 0)],
        writes: [
          { next: 1, ttlMs: -1 },
          { next: 3_000_000, ttlMs: 3000 },
        ],
        delayMs: 1000,
      },
    );
  });

  it('only token buckets and lockouts can be booked; windows and concurrency slots are asked again later', () => {
    assert.deepEqual(
      [bucket(), lockout(1)].map((p) => p.reservable),
      [true, true],
    );
    // Each full, with the retry it reports.
    const others: [AnyPolicy, unknown, number][] = [
      [fixedWindow({ limit: 1, windowMs: 1000 }), [0, 1], 1000],
      [slidingWindow({ limit: 1, windowMs: 1000 }), [0], 1000],
      [slidingWindowCounter({ limit: 1, windowMs: 1000 }), [0, 0, 1], 2000],
      [concurrency({ max: 1, leaseMs: 1000 }), [['a', 1000]], 1000],
    ];
    for (const [policy, state, retry] of others) {
      assert.equal(policy.reservable, false, policy.kind);
      const evaluation = evaluatePolicies([bucket(), policy], [undefined, state], 0, {
        action: 'consume',
        cost: 1,
        lease: 'b',
        maxDelayMs: 60_000,
      });
      assert.deepEqual(
        [evaluation.allowed, evaluation.writes, evaluation.delayMs, evaluation.results[1]?.retryAfterMs],
        [false, [], 0, retry],
        policy.kind,
      );
    }
  });

  it('is not attempted for a peek', () => {
    assert.deepEqual(
      evaluatePolicies([bucket()], [EMPTY_AT_0], 0, { action: 'peek', cost: 1, maxDelayMs: 60_000 }),
      { allowed: false, results: [result(false, 0, 2000, 1000)], writes: [], delayMs: 0 },
    );
  });

  it('gives up when a policy still denies at the booked instant', () => {
    // A reservable policy whose retry hint is too early: room comes at 5000, not at the 1000 it claims.
    const optimistic: AnyPolicy = {
      ...bucket(),
      evaluate: (_state, nowMs) => ({
        result: nowMs >= 5000 ? OPEN : result(false, 0, 0, 1000),
        next: undefined,
        ttlMs: 0,
      }),
    };
    assert.deepEqual(
      evaluatePolicies([optimistic], [undefined], 0, { action: 'consume', cost: 1, maxDelayMs: 60_000 }),
      { allowed: false, results: [result(false, 0, 0, 1000)], writes: [], delayMs: 0 },
    );
  });
});

describe('evaluatePolicies: refund and block', () => {
  it('refund gives cost back to every policy and frees the lease; results are the views before it', () => {
    const policies = [
      bucket(),
      concurrency({ max: 1, leaseMs: 1000 }),
      fixedWindow({ limit: 2, windowMs: 1000 }),
      lockout(5000),
    ];
    assert.deepEqual(
      evaluatePolicies(policies, [EMPTY_AT_0, [['a', 1000]], [0, 2], 9000], 500, {
        action: 'refund',
        cost: 1,
        lease: 'a',
      }),
      {
        allowed: true,
        results: [
          result(true, 0, 1500, 0),
          result(true, 0, 500, 0),
          result(true, 0, 500, 0),
          result(false, 0, 8500, 8500),
        ],
        writes: [
          { next: 1_000_000, ttlMs: 500 },
          { next: [], ttlMs: 0 },
          { next: [0, 1], ttlMs: 500 },
          NOTHING,
        ],
        delayMs: 0,
      },
    );
  });

  it('a refund that changes nothing writes nothing for each policy', () => {
    const policies = [bucket(), concurrency({ max: 1, leaseMs: 1000 })];
    assert.deepEqual(evaluatePolicies(policies, [undefined, undefined], 500, { action: 'refund', cost: 1 }), {
      allowed: true,
      results: [FULL_BUCKET, result(true, 1, 0, 0)],
      writes: [NOTHING, NOTHING],
      delayMs: 0,
    });
    // Without a lease, a slot taken under the empty name stays taken.
    assert.deepEqual(
      evaluatePolicies([policies[1] as AnyPolicy], [[['', 1000]]], 500, { action: 'refund', cost: 1 }).writes,
      [NOTHING],
    );
  });

  it('block locks out for cost ms; the other policies are untouched', () => {
    assert.deepEqual(
      evaluatePolicies([bucket(), lockout(0)], [EMPTY_AT_0, undefined], 500, { action: 'block', cost: 3000 }),
      {
        allowed: true,
        results: [result(true, 0, 1500, 0), OPEN],
        writes: [NOTHING, { next: 3500, ttlMs: 3000 }],
        delayMs: 0,
      },
    );
  });

  it('block never shortens a longer block', () => {
    assert.deepEqual(
      evaluatePolicies([bucket(), lockout(0)], [undefined, 9000], 500, { action: 'block', cost: 3000 }),
      {
        allowed: true,
        results: [FULL_BUCKET, result(false, 0, 8500, 8500)],
        writes: [NOTHING, NOTHING],
        delayMs: 0,
      },
    );
  });
});
