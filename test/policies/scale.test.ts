// A policy scaled to one instance's share of the fleet (the memory fallback): the same kind, name and window, the
// quota (and a bucket's rate) times the share, rounded down but never from some to none, and never from none to some.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AnyPolicy,
  fixedWindow,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';
import { alignedWindow } from '../../src/policies/aligned-window.js';
import { scaledQuota } from '../../src/policies/policy.js';
import { Run } from '../harness/policy-helpers.js';

describe('scaledQuota', () => {
  it('multiplies and rounds down', () => {
    assert.equal(scaledQuota(10, 0.5), 5);
    assert.equal(scaledQuota(7, 0.5), 3);
    assert.equal(scaledQuota(100, 0.25), 25);
    assert.equal(scaledQuota(9, 1), 9);
  });

  it('keeps at least one unit where there was any, and none where there was none', () => {
    assert.equal(scaledQuota(3, 0.1), 1);
    assert.equal(scaledQuota(1, 0.001), 1);
    assert.equal(scaledQuota(0, 0.5), 0);
    assert.equal(scaledQuota(0, 1), 0);
  });
});

const windows: [string, (options: { limit: number; windowMs: number; name: string }) => AnyPolicy][] = [
  ['fixed window', fixedWindow],
  ['aligned window', alignedWindow],
  ['sliding window', slidingWindow],
  ['sliding window counter', slidingWindowCounter],
];

describe('Policy.scale', () => {
  for (const [label, make] of windows) {
    it(`${label}: the quota times the share, with the same kind, name and window`, () => {
      const policy = make({ limit: 10, windowMs: 60_000, name: 'api' });
      const half = policy.scale(0.5);
      assert.deepEqual(
        { kind: half.kind, name: half.name, limit: half.limit, windowMs: half.windowMs, args: half.args },
        { kind: policy.kind, name: 'api', limit: 5, windowMs: 60_000, args: [5, 60_000] },
      );
      const run = new Run(half);
      assert.equal(run.burst(0, 10), 5, 'admits the scaled quota');
    });

    it(`${label}: a limit of 0 stays 0, so the fallback admits nothing either`, () => {
      const none = make({ limit: 0, windowMs: 1000, name: 'off' }).scale(0.5);
      assert.equal(none.limit, 0);
      assert.equal(new Run(none).burst(0, 3), 0);
    });
  }

  it('token bucket: the capacity and the refill rate times the share, so the time to refill stays', () => {
    const bucket = tokenBucket({ capacity: 10, refillPerSecond: 2, name: 'burst' });
    const half = bucket.scale(0.5);
    assert.deepEqual(
      { kind: half.kind, name: half.name, limit: half.limit, windowMs: half.windowMs, args: half.args },
      // 5 tokens, one every 1,000,000 µs (1 per second): 5 s from empty to full, as before.
      { kind: 'token-bucket', name: 'burst', limit: 5, windowMs: 5000, args: [5, 1_000_000] },
    );
    const run = new Run(half);
    assert.equal(run.burst(0, 10), 5);
    assert.equal(run.burst(999, 1), 0);
    assert.equal(run.burst(1000, 2), 1, 'one token a second, half the original rate');
  });

  it('token bucket: a capacity of 0 stays 0', () => {
    const none = tokenBucket({ capacity: 0, refillPerSecond: 1 }).scale(0.5);
    assert.equal(none.limit, 0);
    assert.equal(new Run(none).burst(0, 3), 0);
  });
});
