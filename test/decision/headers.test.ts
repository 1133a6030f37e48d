// Header fields against hand-computed values, in the order written: drafts 6 and 7, and what every style shares.
// The code never supplies an expected value. Drafts 8 and 10, the legacy set and the gate's header options, and
// express-rate-limit's bytes have files of their own (headers-*.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEADER_STYLES } from '../../src/decision/headers.js';
import { type Decision, fixedWindow, rateLimitHeaders } from '../../src/index.js';
import {
  burstDenied,
  dailyAndBurst,
  decision,
  fields,
  lifetime,
  lifetimeAndSlots,
} from './headers-fixtures.js';

describe('draft-6 headers', () => {
  it('an allowed request: the legacy set (reset in ISO-8601), then the policy, limit, remaining and reset', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(42, 4500))), [
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '42'],
      ['X-RateLimit-Reset', '2026-01-01T00:00:04.500Z'],
      ['RateLimit-Policy', '100;w=60'],
      ['RateLimit-Limit', '100'],
      ['RateLimit-Remaining', '42'],
      ['RateLimit-Reset', '5'],
    ]);
  });

  it('is the default style', () => {
    assert.deepEqual(
      fields(rateLimitHeaders(decision(42, 4500))),
      fields(rateLimitHeaders(decision(42, 4500), 'draft-6')),
    );
  });

  it('rounds RateLimit-Reset up to the next whole second, so a client never comes back early', () => {
    const reset = (ms: number) => rateLimitHeaders(decision(1, ms))['RateLimit-Reset'];
    assert.equal(reset(0), '0');
    assert.equal(reset(1), '1');
    assert.equal(reset(999), '1');
    assert.equal(reset(1000), '1');
    assert.equal(reset(1001), '2');
    assert.equal(reset(1499), '2');
    assert.equal(reset(59_999), '60');
    assert.equal(reset(86_400_000), '86400');
  });

  it('leaves the resets out when the policy never comes back to rest, and its window (a bucket that never refills)', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(2, -1, undefined, lifetime))), [
      ['X-RateLimit-Limit', '3'],
      ['X-RateLimit-Remaining', '2'],
      ['RateLimit-Policy', '3'],
      ['RateLimit-Limit', '3'],
      ['RateLimit-Remaining', '2'],
    ]);
  });

  it('a denial adds Retry-After last, in whole seconds, rounded up and never 0', () => {
    const retryAfter = (ms: number) => rateLimitHeaders(decision(0, 30_000, ms))['Retry-After'];
    assert.equal(retryAfter(0), '1');
    assert.equal(retryAfter(1), '1');
    assert.equal(retryAfter(999), '1');
    assert.equal(retryAfter(1000), '1');
    assert.equal(retryAfter(1001), '2');
    assert.equal(retryAfter(1500), '2');
    assert.equal(retryAfter(2499), '3');
    assert.equal(retryAfter(59_001), '60');
    assert.deepEqual(fields(rateLimitHeaders(decision(0, 30_000, 12_345))), [
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '2026-01-01T00:00:30.000Z'],
      ['RateLimit-Policy', '100;w=60'],
      ['RateLimit-Limit', '100'],
      ['RateLimit-Remaining', '0'],
      ['RateLimit-Reset', '30'],
      ['Retry-After', '13'],
    ]);
  });

  it('a denial that no wait cures has no Retry-After', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(100, 0, -1))), [
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '100'],
      ['X-RateLimit-Reset', '2026-01-01T00:00:00.000Z'],
      ['RateLimit-Policy', '100;w=60'],
      ['RateLimit-Limit', '100'],
      ['RateLimit-Remaining', '100'],
      ['RateLimit-Reset', '0'],
    ]);
  });

  it("several policies: the binding one's figures, and every policy's quota in the limiter's order", () => {
    assert.deepEqual(fields(rateLimitHeaders(dailyAndBurst)), [
      ['X-RateLimit-Limit', '10'],
      ['X-RateLimit-Remaining', '3'],
      ['X-RateLimit-Reset', '2026-01-01T00:00:03.500Z'],
      ['RateLimit-Policy', '1000;w=86400, 10;w=5'],
      ['RateLimit-Limit', '10'],
      ['RateLimit-Remaining', '3'],
      ['RateLimit-Reset', '4'],
    ]);
  });

  it('a window in whole seconds rounded up; a concurrency limit has none', () => {
    const policy = (windowMs: number) =>
      rateLimitHeaders(decision(1, 0, undefined, fixedWindow({ limit: 7, windowMs })))['RateLimit-Policy'];
    assert.equal(policy(1000), '7;w=1');
    assert.equal(policy(1001), '7;w=2');
    assert.equal(policy(1500), '7;w=2');
    assert.equal(rateLimitHeaders(lifetimeAndSlots)['RateLimit-Policy'], '3, 5');
  });
});

describe('draft-7 headers', () => {
  it('the policy, then limit, remaining and reset in one RateLimit field; no legacy set unless asked', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(42, 4500), 'draft-7')), [
      ['RateLimit-Policy', '100;w=60'],
      ['RateLimit', 'limit=100, remaining=42, reset=5'],
    ]);
  });

  it('rounds reset up to whole seconds', () => {
    const state = (ms: number) => rateLimitHeaders(decision(1, ms), 'draft-7').RateLimit;
    assert.equal(state(0), 'limit=100, remaining=1, reset=0');
    assert.equal(state(1), 'limit=100, remaining=1, reset=1');
    assert.equal(state(1000), 'limit=100, remaining=1, reset=1');
    assert.equal(state(1001), 'limit=100, remaining=1, reset=2');
    assert.equal(state(59_999), 'limit=100, remaining=1, reset=60');
  });

  it('leaves reset and the window out when the policy never comes back to rest', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(2, -1, undefined, lifetime), 'draft-7')), [
      ['RateLimit-Policy', '3'],
      ['RateLimit', 'limit=3, remaining=2'],
    ]);
  });

  it("several policies: the binding one's figures, every policy's quota, and Retry-After on a denial", () => {
    assert.deepEqual(fields(rateLimitHeaders(burstDenied, 'draft-7')), [
      ['RateLimit-Policy', '10;w=5, 1000;w=3600'],
      ['RateLimit', 'limit=10, remaining=0, reset=5'],
      ['Retry-After', '1'],
    ]);
    assert.deepEqual(fields(rateLimitHeaders(lifetimeAndSlots, 'draft-7')), [
      ['RateLimit-Policy', '3, 5'],
      ['RateLimit', 'limit=3, remaining=2'],
    ]);
  });

  it('a denial that no wait cures has no Retry-After', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(100, 0, -1), 'draft-7')), [
      ['RateLimit-Policy', '100;w=60'],
      ['RateLimit', 'limit=100, remaining=100, reset=0'],
    ]);
  });
});

describe('every style', () => {
  it('an allowed request never carries Retry-After, whatever wait it reports', () => {
    const allowed: Decision = { ...decision(5, 1000), retryAfterMs: 3000 };
    for (const style of HEADER_STYLES)
      assert.equal(rateLimitHeaders(allowed, style)['Retry-After'], undefined);
  });

  it('fail-open and fail-closed advertise no quota (it would be a guess); fail-closed still says when to retry', () => {
    for (const style of [...HEADER_STYLES, false] as const) {
      for (const legacyHeaders of [true, false]) {
        const options = { legacyHeaders, key: '203.0.113.7' };
        const open = rateLimitHeaders({ ...decision(0, 0), degraded: 'fail-open' }, style, options);
        const closed = rateLimitHeaders({ ...decision(0, 0, 2500), degraded: 'fail-closed' }, style, options);
        assert.deepEqual(open, {});
        assert.deepEqual(closed, style === false && !legacyHeaders ? {} : { 'Retry-After': '3' });
      }
    }
  });

  it('a fallback decision is real, if local: its headers are those of any decision', () => {
    for (const style of HEADER_STYLES) {
      const fallback: Decision = { ...decision(4, 2000), degraded: 'fallback' };
      const options = { legacyHeaders: true, key: '203.0.113.7' };
      assert.deepEqual(
        fields(rateLimitHeaders(fallback, style, options)),
        fields(rateLimitHeaders(decision(4, 2000), style, options)),
      );
    }
    assert.deepEqual(fields(rateLimitHeaders({ ...decision(4, 2000), degraded: 'fallback' }, 'draft-7')), [
      ['RateLimit-Policy', '100;w=60'],
      ['RateLimit', 'limit=100, remaining=4, reset=2'],
    ]);
  });

  it('style false and no legacy set: nothing, not even Retry-After', () => {
    assert.deepEqual(rateLimitHeaders(decision(0, 30_000, 12_345), false), {});
    assert.deepEqual(rateLimitHeaders(decision(0, 30_000, 12_345), false, { legacyHeaders: false }), {});
  });
});

describe('HEADER_STYLES', () => {
  it('names every style, in order, each with its own fields', () => {
    assert.deepEqual(HEADER_STYLES, ['draft-6', 'draft-7', 'draft-8', 'draft-10']);
    const names = HEADER_STYLES.map((style) => Object.keys(rateLimitHeaders(decision(1, 1000), style)));
    assert.deepEqual(names, [
      [
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'RateLimit-Policy',
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
      ],
      ['RateLimit-Policy', 'RateLimit'],
      ['RateLimit', 'RateLimit-Policy'],
      ['RateLimit-Policy', 'RateLimit'],
    ]);
  });
});
