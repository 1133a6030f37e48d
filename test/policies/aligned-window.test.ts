// Unit tests of the aligned window (windows at multiples of their length since the epoch): exact decision
// sequences, boundaries, refunds, scaling, validation and clock edges.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AlignedWindowState,
  alignedWindow,
  alignedWindowDescription,
  alignedWindowLua,
} from '../../src/policies/aligned-window.js';
import { builtInTwins } from '../../src/policies/index.js';
import { Run, result, throwsConfig } from '../harness/policy-helpers.js';

/** 2026-12-03T12:00:00.000Z, a whole minute (and second) since the epoch. */
const NOON = Date.UTC(2026, 11, 3, 12);

describe('alignedWindow: documented sequences', () => {
  it("limit 5 per '10s': windows start at multiples of 10 s, whenever the first request came", () => {
    const policy = alignedWindow({ limit: 5, windowMs: '10s' });
    assert.equal(policy.limit, 5);
    assert.equal(policy.windowMs, 10_000);
    assert.deepEqual(policy.args, [5, 10_000]);
    const run = new Run(policy);
    assert.deepEqual(run.at(1000), result(true, 4, 9000, 0));
    assert.deepEqual(run.at(2000), result(true, 3, 8000, 0));
    assert.deepEqual(run.at(3000, 3), result(true, 0, 7000, 0));
    assert.deepEqual(run.at(3000), result(false, 0, 7000, 7000));
    assert.deepEqual(run.at(9999), result(false, 0, 1, 1));
    assert.deepEqual(run.at(10_000), result(true, 4, 10_000, 0));
    assert.deepEqual(run.state, [10_000, 1]);
  });

  it('a minute window is 12:00:00.000 to 12:00:59.999 for every client', () => {
    const early = new Run(alignedWindow({ limit: 2, windowMs: '1m' }));
    const late = new Run(alignedWindow({ limit: 2, windowMs: '1m' }));
    assert.deepEqual(early.at(NOON + 1), result(true, 1, 59_999, 0));
    assert.deepEqual(late.at(NOON + 59_000), result(true, 1, 1000, 0));
    assert.deepEqual(early.state, [NOON, 1]);
    assert.deepEqual(late.state, [NOON, 1]);
    assert.deepEqual(late.at(NOON + 59_999, 2), result(false, 1, 1, 1));
    // Both reset together at the top of the next minute.
    assert.deepEqual(early.at(NOON + 60_000, 2), result(true, 0, 60_000, 0));
    assert.deepEqual(late.at(NOON + 60_000, 2), result(true, 0, 60_000, 0));
  });

  it('boundaries at exact multiples: k x W opens a window, k x W - 1 is still the last one', () => {
    for (const windowMs of [1, 7, 1000, 86_400_000]) {
      const run = new Run(alignedWindow({ limit: 1, windowMs }));
      const k = 3 * windowMs;
      assert.deepEqual(run.at(k - 1), result(true, 0, 1, 0), `${windowMs}: the last ms of a window`);
      assert.deepEqual(run.peek(k - 1), result(false, 0, 1, 1), `${windowMs}: its count holds to the end`);
      assert.deepEqual(run.at(k), result(true, 0, windowMs, 0), `${windowMs}: the first ms of the next`);
      assert.deepEqual(run.state, [k, 1]);
      assert.deepEqual(run.peek(k + windowMs - 1), result(false, 0, 1, 1));
    }
  });

  it('the documented boundary burst: up to 2 x limit across a window edge', () => {
    const run = new Run(alignedWindow({ limit: 5, windowMs: 10_000 }));
    assert.equal(run.burst(9999, 10), 5);
    assert.equal(run.burst(10_000, 10), 5);
  });

  it('weighted cost', () => {
    const run = new Run(alignedWindow({ limit: 5, windowMs: 10_000 }));
    assert.deepEqual(run.at(0, 3), result(true, 2, 10_000, 0));
    assert.deepEqual(run.at(100, 3), result(false, 2, 9900, 9900));
    assert.deepEqual(run.at(200, 2), result(true, 0, 9800, 0));
    assert.deepEqual(run.at(10_000, 5), result(true, 0, 10_000, 0));
  });

  it('a cost of 0 passes without leaving a trace', () => {
    const run = new Run(alignedWindow({ limit: 5, windowMs: 10_000 }));
    assert.deepEqual(run.at(2500, 0), result(true, 5, 0, 0));
    assert.deepEqual(run.at(2500, 1), result(true, 4, 7500, 0));
    assert.deepEqual(run.at(2600, 0), result(true, 4, 7400, 0));
  });

  it('a denied request spends nothing: the count stays what the admitted requests made it', () => {
    const run = new Run(alignedWindow({ limit: 2, windowMs: 1000 }));
    assert.equal(run.burst(100, 2), 2);
    const denied = alignedWindow({ limit: 2, windowMs: 1000 }).evaluate(run.state, 200, 1);
    assert.equal(denied.next, undefined);
    assert.equal(denied.ttlMs, 0);
    assert.equal(run.burst(300, 50), 0);
    assert.deepEqual(run.state, [0, 2]);
    assert.deepEqual(run.at(1000), result(true, 1, 1000, 0));
  });

  it('a cost above the limit is denied with retryAfterMs -1 and writes nothing', () => {
    const policy = alignedWindow({ limit: 5, windowMs: 10_000 });
    assert.deepEqual(policy.evaluate(undefined, 1234, 6), {
      result: result(false, 5, 0, -1),
      next: undefined,
      ttlMs: 0,
    });
    const run = new Run(policy);
    run.at(0, 2);
    assert.deepEqual(run.at(500, 6), result(false, 3, 9500, -1));
    assert.deepEqual(run.state, [0, 2]);
  });

  it('limit 0 rejects everything, with no retry hint', () => {
    const run = new Run(alignedWindow({ limit: 0, windowMs: 1000 }));
    for (const now of [0, 999, 1000, NOON + 1]) {
      assert.deepEqual(run.at(now), result(false, 0, 0, -1), `at ${now}`);
      assert.deepEqual(run.at(now, 0), result(true, 0, 0, 0), `a cost of 0 at ${now}`);
    }
    // A cost of 0 writes the empty window it counted nothing into: never a unit.
    assert.deepEqual(run.state, [NOON, 0]);
  });
});

describe('alignedWindow: state and time', () => {
  it('writes [windowStart, count] until the window ends; a state at rest means the same as none', () => {
    const policy = alignedWindow({ limit: 1, windowMs: 1000 });
    const first = policy.evaluate(undefined, NOON + 1100, 1);
    assert.deepEqual(first.next, [NOON + 1000, 1]);
    assert.equal(first.ttlMs, 900);
    for (const later of [NOON + 2000, NOON + 2999, NOON + 5432]) {
      assert.deepEqual(policy.evaluate(first.next, later, 1), policy.evaluate(undefined, later, 1));
    }
  });

  it('an evaluation in the stored window counts on from it', () => {
    const policy = alignedWindow({ limit: 3, windowMs: 1000 });
    const state: AlignedWindowState = [5000, 2];
    assert.deepEqual(policy.evaluate(state, 5000, 1), {
      result: result(true, 0, 1000, 0),
      next: [5000, 3],
      ttlMs: 1000,
    });
    assert.deepEqual(policy.evaluate(state, 5999, 2).result, result(false, 1, 1, 1));
  });

  it('waiting exactly retryAfterMs passes, and 1 ms less does not', () => {
    const run = new Run(alignedWindow({ limit: 3, windowMs: 777 }));
    run.at(50, 2);
    for (const [now, cost] of [
      [100, 2],
      [100, 3],
      [776, 2],
    ] as const) {
      const denied = run.peek(now, cost);
      assert.equal(denied.allowed, false);
      assert.equal(run.peek(now + denied.retryAfterMs, cost).allowed, true);
      assert.equal(run.peek(now + denied.retryAfterMs - 1, cost).allowed, false);
    }
  });

  it('a clock moving backwards stays in the stored window and never mints', () => {
    const run = new Run(alignedWindow({ limit: 5, windowMs: 10_000 }));
    assert.equal(run.burst(12_000, 2), 2);
    // Back into the previous aligned window: still the stored window [10000, 20000), which has 3 left.
    assert.equal(run.at(5000).remaining, 2);
    assert.deepEqual(run.state, [10_000, 3]);
    assert.equal(run.burst(0, 10), 2);
    for (const now of [0, 9999, 10_000, 19_999]) assert.equal(run.peek(now).allowed, false, `at ${now}`);
    assert.deepEqual(run.at(20_000), result(true, 4, 10_000, 0));
  });

  it('after a clock step back, retryAfterMs, resetMs and ttlMs are measured from the given clock', () => {
    const policy = alignedWindow({ limit: 2, windowMs: 10_000 });
    const run = new Run(policy);
    run.at(10_000);
    const written = policy.evaluate(run.state, 5000, 1);
    assert.deepEqual(written.next, [10_000, 2]);
    assert.equal(written.ttlMs, 15_000);
    run.at(5000);
    const denied = run.peek(5000);
    assert.deepEqual(denied, result(false, 0, 15_000, 15_000));
    assert.equal(run.peek(5000 + denied.retryAfterMs).allowed, true);
  });

  it('stays exact on epoch timestamps and long windows', () => {
    const day = 86_400_000;
    const run = new Run(alignedWindow({ limit: 1000, windowMs: '1d' }));
    const now = Date.UTC(2026, 11, 3, 17, 45, 12, 345);
    assert.deepEqual(run.at(now, 10), result(true, 990, Date.UTC(2026, 11, 4) - now, 0));
    assert.deepEqual(run.state, [Date.UTC(2026, 11, 3), 10]);
    assert.equal(Date.UTC(2026, 11, 3) % day, 0);
  });
});

describe('alignedWindow: refund', () => {
  const policy = alignedWindow({ limit: 5, windowMs: 1000 });
  const state: AlignedWindowState = [3000, 4];

  it('gives units back to the window that counted them, never below zero, until it ends', () => {
    assert.deepEqual(policy.refund(state, 3500, 3, '', 3200), { next: [3000, 1], ttlMs: 500 });
    assert.deepEqual(policy.refund(state, 3999, 9, '', 3000), { next: [3000, 0], ttlMs: 1 });
    assert.deepEqual(policy.refund(state, 3200, 1, '', 3999), { next: [3000, 3], ttlMs: 800 });
    // The clock stepped back behind the window that counted them: they are still its units.
    assert.deepEqual(policy.refund(state, 2500, 1, '', 3100), { next: [3000, 3], ttlMs: 1500 });
  });

  it('gives nothing to another window: spent in an earlier or a later one, or the window has ended', () => {
    assert.equal(policy.refund(state, 3500, 1, '', 2999), undefined);
    assert.equal(policy.refund(state, 3500, 1, '', 4000), undefined);
    assert.equal(policy.refund(state, 4000, 1, '', 3500), undefined);
    assert.equal(policy.refund(undefined, 3500, 1, '', 3500), undefined);
    assert.equal(policy.refund([3000, 0], 3500, 1, '', 3500), undefined);
    assert.equal(policy.refund(state, 3500, 0, '', 3500), undefined);
  });

  it('a refund through the window undoes a spend for every later request', () => {
    const run = new Run(policy);
    assert.equal(run.burst(NOON + 10, 5), 5);
    const refunded = policy.refund(run.state, NOON + 20, 2, '', NOON + 10);
    assert.deepEqual(refunded, { next: [NOON, 3], ttlMs: 980 });
    run.state = refunded?.next;
    assert.equal(run.burst(NOON + 30, 5), 2);
    // Spent in the window before, refunded in this one: the new window never held those units.
    assert.equal(policy.refund(run.state, NOON + 1500, 2, '', NOON + 999), undefined);
  });
});

describe('alignedWindow: scale', () => {
  it('the quota times the share, the same kind, name and aligned windows', () => {
    const policy = alignedWindow({ limit: 10, windowMs: 60_000, name: 'api' });
    const half = policy.scale(0.5);
    assert.deepEqual(
      { kind: half.kind, name: half.name, limit: half.limit, windowMs: half.windowMs, args: half.args },
      { kind: 'aligned-window', name: 'api', limit: 5, windowMs: 60_000, args: [5, 60_000] },
    );
    const run = new Run(half);
    assert.deepEqual(run.at(NOON + 45_000, 5), result(true, 0, 15_000, 0));
    assert.equal(run.burst(NOON + 59_999, 1), 0);
    assert.equal(run.burst(NOON + 60_000, 10), 5);
  });

  it('keeps one unit where there was any, and a limit of 0 stays 0', () => {
    assert.equal(alignedWindow({ limit: 3, windowMs: 1000 }).scale(0.1).limit, 1);
    const none = alignedWindow({ limit: 0, windowMs: 1000 }).scale(0.5);
    assert.equal(none.limit, 0);
    assert.equal(new Run(none).burst(0, 3), 0);
  });
});

describe('alignedWindow: what it says of itself', () => {
  it('its kind, name, retention, state and Lua twin', () => {
    const policy = alignedWindow({ limit: 4, windowMs: '2s' });
    assert.deepEqual(
      {
        kind: policy.kind,
        name: policy.name,
        retentionMs: policy.retentionMs,
        reservable: policy.reservable,
        stateWidth: policy.stateWidth,
        leased: policy.leased,
        level: policy.level,
        quotaUnit: policy.quotaUnit,
        retryHintMs: policy.retryHintMs,
        heldMs: policy.heldMs,
      },
      {
        kind: 'aligned-window',
        name: 'aligned-window',
        retentionMs: 2000,
        reservable: false,
        stateWidth: 2,
        leased: false,
        level: 'window-count',
        quotaUnit: undefined,
        retryHintMs: undefined,
        heldMs: undefined,
      },
    );
    assert.equal(policy.lua, alignedWindowLua);
    assert.equal(builtInTwins['aligned-window'], alignedWindowLua);
  });

  it('its description builds it from a spec, with the window kinds’ form', () => {
    assert.deepEqual(
      {
        kind: alignedWindowDescription.kind,
        label: alignedWindowDescription.label,
        options: alignedWindowDescription.options,
        fields: alignedWindowDescription.fields,
      },
      {
        kind: 'aligned-window',
        label: 'Aligned window',
        options: ['name', 'limit', 'windowMs'],
        fields: [
          ['limit', 'Limit', '5'],
          ['windowMs', 'Window (ms or 10s)', '10s'],
        ],
      },
    );
    const built = alignedWindowDescription.build({ limit: 3, windowMs: '10s', name: 'page' });
    assert.deepEqual(
      [built.kind, built.name, built.limit, built.windowMs],
      ['aligned-window', 'page', 3, 10_000],
    );
    throwsConfig(() => alignedWindowDescription.build({ limit: -1, windowMs: '10s' }), 'limit');
  });
});

describe('alignedWindow: validation at construction', () => {
  it('rejects a bad limit, windowMs or name, naming the option', () => {
    for (const limit of [Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY]) {
      throwsConfig(() => alignedWindow({ limit, windowMs: 1000 }), 'limit');
    }
    for (const windowMs of [0, -1, 1.5, 'abc', '0s']) {
      throwsConfig(() => alignedWindow({ limit: 5, windowMs: windowMs as number }), 'windowMs');
    }
    throwsConfig(() => alignedWindow({ limit: 2 ** 51, windowMs: '1d' }), 'limit');
    throwsConfig(() => alignedWindow({ limit: 1, windowMs: 1000, name: 'x'.repeat(65) }), 'name');
  });
  it('takes limits whose product with the window passes 2^51, which it never computes', () => {
    const year = 365 * 86_400_000;
    const policy = alignedWindow({ limit: 4_294_967_295, windowMs: year });
    const first = policy.evaluate(undefined, year + 5, 4_294_967_294);
    assert.deepEqual(first.result, { allowed: true, remaining: 1, resetMs: year - 5, retryAfterMs: 0 });
    const last = policy.evaluate(first.next, year + 6, 2);
    assert.deepEqual(last.result, {
      allowed: false,
      remaining: 1,
      resetMs: year - 6,
      retryAfterMs: year - 6,
    });
  });
});
