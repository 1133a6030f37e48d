// Header fields against hand-computed values, for every style: rateLimitHeaders never supplies an expected value.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEADER_STYLES } from '../../src/headers.js';
import {
  type AnyPolicy,
  type Decision,
  fixedWindow,
  type PolicyDecision,
  rateLimitHeaders,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';

/** 2026-01-01T00:00:00.000Z */
const NOW = Date.UTC(2026, 0, 1);
const minute = fixedWindow({ limit: 100, windowMs: 60_000 });

function policyDecision(
  policy: AnyPolicy,
  remaining: number,
  resetMs: number,
  retryAfterMs = 0,
): PolicyDecision {
  return { allowed: retryAfterMs === 0, remaining, resetMs, retryAfterMs, policy };
}

/** A one-policy decision: allowed when no wait is given. */
function decision(
  remaining: number,
  resetMs: number,
  retryAfterMs?: number,
  policy: AnyPolicy = minute,
): Decision {
  const denied = retryAfterMs !== undefined;
  return {
    allowed: !denied,
    limit: policy.limit,
    remaining,
    resetMs,
    ...(denied && retryAfterMs >= 0 ? { retryAfterMs } : {}),
    nowMs: NOW,
    policies: [policyDecision(policy, remaining, resetMs, retryAfterMs ?? 0)],
  };
}

describe('draft-6 headers', () => {
  it('an allowed request: limit, remaining, reset in whole seconds rounded up, and the reset instant in ISO-8601', () => {
    assert.deepEqual(rateLimitHeaders(decision(42, 4500)), {
      'RateLimit-Policy': '100;w=60',
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '42',
      'RateLimit-Reset': '5',
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '42',
      'X-RateLimit-Reset': '2026-01-01T00:00:04.500Z',
    });
  });

  it('is the default style', () => {
    assert.deepEqual(rateLimitHeaders(decision(42, 4500)), rateLimitHeaders(decision(42, 4500), 'draft-6'));
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

  it('states the reset instant to the millisecond, from the decision clock', () => {
    assert.equal(rateLimitHeaders(decision(1, 1))['X-RateLimit-Reset'], '2026-01-01T00:00:00.001Z');
    assert.equal(rateLimitHeaders(decision(1, 0))['X-RateLimit-Reset'], '2026-01-01T00:00:00.000Z');
    assert.equal(rateLimitHeaders(decision(1, 90_061_001))['X-RateLimit-Reset'], '2026-01-02T01:01:01.001Z');
  });

  it('leaves the reset out when the policy never comes back to rest (a bucket that never refills)', () => {
    const spent = tokenBucket({ capacity: 3, refillPerSecond: 0 });
    assert.deepEqual(rateLimitHeaders(decision(2, -1, undefined, spent)), {
      'RateLimit-Policy': '3',
      'RateLimit-Limit': '3',
      'RateLimit-Remaining': '2',
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '2',
    });
  });

  it('a denial adds Retry-After in whole seconds, rounded up and never 0', () => {
    const retryAfter = (ms: number) => rateLimitHeaders(decision(0, 30_000, ms))['Retry-After'];
    assert.equal(retryAfter(0), '1');
    assert.equal(retryAfter(1), '1');
    assert.equal(retryAfter(999), '1');
    assert.equal(retryAfter(1000), '1');
    assert.equal(retryAfter(1001), '2');
    assert.equal(retryAfter(1500), '2');
    assert.equal(retryAfter(2499), '3');
    assert.equal(retryAfter(59_001), '60');
    assert.deepEqual(rateLimitHeaders(decision(0, 30_000, 12_345)), {
      'RateLimit-Policy': '100;w=60',
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '30',
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '2026-01-01T00:00:30.000Z',
      'Retry-After': '13',
    });
  });

  it('a denial that no wait cures has no Retry-After', () => {
    const headers = rateLimitHeaders(decision(100, 0, -1));
    assert.equal(headers['Retry-After'], undefined);
    assert.deepEqual(headers, {
      'RateLimit-Policy': '100;w=60',
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '100',
      'RateLimit-Reset': '0',
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '100',
      'X-RateLimit-Reset': '2026-01-01T00:00:00.000Z',
    });
  });

  it('an allowed request never carries Retry-After, whatever wait it reports', () => {
    const allowed: Decision = { ...decision(5, 1000), retryAfterMs: 3000 };
    assert.equal(rateLimitHeaders(allowed)['Retry-After'], undefined);
    assert.equal(rateLimitHeaders(allowed, 'draft-10')['Retry-After'], undefined);
  });

  it('reports the binding policy of several: its limit and remaining, not the first policy', () => {
    const burst = tokenBucket({ capacity: 10, refillPerSecond: 2, name: 'burst' });
    const daily = fixedWindow({ limit: 1000, windowMs: '1d', name: 'daily' });
    const both: Decision = {
      allowed: true,
      limit: 10,
      remaining: 3,
      resetMs: 3500,
      nowMs: NOW,
      policies: [policyDecision(daily, 700, 3_600_000), policyDecision(burst, 3, 3500)],
    };
    assert.deepEqual(rateLimitHeaders(both), {
      'RateLimit-Policy': '1000;w=86400, 10;w=5',
      'RateLimit-Limit': '10',
      'RateLimit-Remaining': '3',
      'RateLimit-Reset': '4',
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '3',
      'X-RateLimit-Reset': '2026-01-01T00:00:03.500Z',
    });
  });
});

describe('draft-10 headers', () => {
  it('one policy: its quota and window in RateLimit-Policy, remaining and reset in RateLimit', () => {
    assert.deepEqual(rateLimitHeaders(decision(42, 4500), 'draft-10'), {
      'RateLimit-Policy': '"fixed-window";q=100;w=60',
      RateLimit: '"fixed-window";r=42;t=5',
    });
  });

  it('rounds w and t up to whole seconds', () => {
    const odd = fixedWindow({ limit: 7, windowMs: 1500, name: 'odd' });
    const headers = (resetMs: number) => rateLimitHeaders(decision(3, resetMs, undefined, odd), 'draft-10');
    assert.equal(headers(1)['RateLimit-Policy'], '"odd";q=7;w=2');
    assert.equal(headers(0).RateLimit, '"odd";r=3;t=0');
    assert.equal(headers(1).RateLimit, '"odd";r=3;t=1');
    assert.equal(headers(1000).RateLimit, '"odd";r=3;t=1');
    assert.equal(headers(1001).RateLimit, '"odd";r=3;t=2');
    const second = fixedWindow({ limit: 1, windowMs: 1000, name: 'second' });
    assert.equal(
      rateLimitHeaders(decision(0, 1000, undefined, second), 'draft-10')['RateLimit-Policy'],
      '"second";q=1;w=1',
    );
  });

  it('a token bucket advertises its time to refill from empty as the window', () => {
    // 10 tokens at 2 per second: empty to full in 5 s.
    const burst = tokenBucket({ capacity: 10, refillPerSecond: 2, name: 'burst' });
    assert.equal(
      rateLimitHeaders(decision(9, 500, undefined, burst), 'draft-10')['RateLimit-Policy'],
      '"burst";q=10;w=5',
    );
  });

  it('a bucket that never refills has no window and no reset', () => {
    const spent = tokenBucket({ capacity: 3, refillPerSecond: 0, name: 'lifetime' });
    assert.deepEqual(rateLimitHeaders(decision(2, -1, undefined, spent), 'draft-10'), {
      'RateLimit-Policy': '"lifetime";q=3',
      RateLimit: '"lifetime";r=2',
    });
  });

  it('several policies: one item each, in the limiter order, each with its own figures', () => {
    const burst = tokenBucket({ capacity: 10, refillPerSecond: 2, name: 'burst' });
    const sustained = slidingWindowCounter({ limit: 1000, windowMs: '1h', name: 'sustained' });
    const both: Decision = {
      allowed: false,
      limit: 10,
      remaining: 0,
      resetMs: 5000,
      retryAfterMs: 500,
      nowMs: NOW,
      policies: [policyDecision(burst, 0, 5000, 500), policyDecision(sustained, 990, 7_200_000)],
    };
    assert.deepEqual(rateLimitHeaders(both, 'draft-10'), {
      'RateLimit-Policy': '"burst";q=10;w=5, "sustained";q=1000;w=3600',
      RateLimit: '"burst";r=0;t=5, "sustained";r=990;t=7200',
      'Retry-After': '1',
    });
  });

  it('a denial that no wait cures has no Retry-After', () => {
    assert.deepEqual(rateLimitHeaders(decision(100, 0, -1), 'draft-10'), {
      'RateLimit-Policy': '"fixed-window";q=100;w=60',
      RateLimit: '"fixed-window";r=100;t=0',
    });
  });
});

describe('degraded decisions', () => {
  it('fail-open and fail-closed advertise no quota (it would be a guess); fail-closed still says when to retry', () => {
    for (const style of ['draft-6', 'draft-10'] as const) {
      assert.deepEqual(rateLimitHeaders({ ...decision(0, 0), degraded: 'fail-open' }, style), {});
      assert.deepEqual(rateLimitHeaders({ ...decision(0, 0, 2500), degraded: 'fail-closed' }, style), {
        'Retry-After': '3',
      });
    }
  });

  it('a fallback decision is real, if local: its headers are those of any decision', () => {
    const fallback: Decision = { ...decision(4, 2000), degraded: 'fallback' };
    assert.deepEqual(rateLimitHeaders(fallback), rateLimitHeaders(decision(4, 2000)));
    assert.deepEqual(rateLimitHeaders(fallback, 'draft-10'), {
      'RateLimit-Policy': '"fixed-window";q=100;w=60',
      RateLimit: '"fixed-window";r=4;t=2',
    });
  });
});

describe('HEADER_STYLES', () => {
  it('names every style, in order, each with its own fields', () => {
    assert.deepEqual(HEADER_STYLES, ['draft-6', 'draft-7', 'draft-8', 'draft-10']);
    const fields = HEADER_STYLES.map((style) =>
      Object.keys(rateLimitHeaders(decision(1, 1000), style)).sort(),
    );
    assert.deepEqual(fields, [
      [
        'RateLimit-Limit',
        'RateLimit-Policy',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
      ],
      ['RateLimit', 'RateLimit-Policy'],
      ['RateLimit', 'RateLimit-Policy'],
      ['RateLimit', 'RateLimit-Policy'],
    ]);
  });
});
