// Draft-8 and draft-10: RateLimit and RateLimit-Policy as lists with one named item per policy, against
// hand-computed values in the order written.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDictionary, parseList } from 'structured-headers';
import { fixedWindow, rateLimitHeaders } from '../../src/index.js';
import {
  burst,
  burstDenied,
  decision,
  fields,
  lifetimeAndSlots,
  PK_203_0_113_7,
  PK_UNKNOWN,
} from './headers-fixtures.js';

describe('draft-8 headers', () => {
  it("one named item per field; the policy's carries the partition key of the identity counted", () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(42, 4500), 'draft-8', { key: '203.0.113.7' })), [
      ['RateLimit', '"fixed-window"; r=42; t=5'],
      ['RateLimit-Policy', `"fixed-window"; q=100; w=60; pk=:${PK_203_0_113_7}:`],
    ]);
    assert.equal(
      rateLimitHeaders(decision(42, 4500), 'draft-8', { key: 'unknown' })['RateLimit-Policy'],
      `"fixed-window"; q=100; w=60; pk=:${PK_UNKNOWN}:`,
    );
  });

  it('without a key, no partition key', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(42, 4500), 'draft-8')), [
      ['RateLimit', '"fixed-window"; r=42; t=5'],
      ['RateLimit-Policy', '"fixed-window"; q=100; w=60'],
    ]);
  });

  it('rounds t and w up to whole seconds', () => {
    const odd = fixedWindow({ limit: 7, windowMs: 1001, name: 'odd' });
    const headers = (ms: number) => rateLimitHeaders(decision(3, ms, undefined, odd), 'draft-8');
    assert.equal(headers(0)['RateLimit-Policy'], '"odd"; q=7; w=2');
    assert.equal(headers(0).RateLimit, '"odd"; r=3; t=0');
    assert.equal(headers(1).RateLimit, '"odd"; r=3; t=1');
    assert.equal(headers(1000).RateLimit, '"odd"; r=3; t=1');
    assert.equal(headers(1001).RateLimit, '"odd"; r=3; t=2');
  });

  it('several policies: one item each, in the limiter order, each with its own figures and the key', () => {
    assert.deepEqual(fields(rateLimitHeaders(burstDenied, 'draft-8', { key: '203.0.113.7' })), [
      ['RateLimit', '"burst"; r=0; t=5, "sustained"; r=990; t=7200'],
      [
        'RateLimit-Policy',
        `"burst"; q=10; w=5; pk=:${PK_203_0_113_7}:, "sustained"; q=1000; w=3600; pk=:${PK_203_0_113_7}:`,
      ],
      ['Retry-After', '1'],
    ]);
  });

  it('a policy that never rests has no t and no w; a concurrency limit counts requests in flight', () => {
    assert.deepEqual(fields(rateLimitHeaders(lifetimeAndSlots, 'draft-8', { key: 'unknown' })), [
      ['RateLimit', '"lifetime"; r=2, "in-flight"; r=4; t=10'],
      [
        'RateLimit-Policy',
        `"lifetime"; q=3; pk=:${PK_UNKNOWN}:, "in-flight"; q=5; qu="concurrent-requests"; pk=:${PK_UNKNOWN}:`,
      ],
    ]);
  });
});

describe('draft-10 headers', () => {
  it('one policy: its quota and window in RateLimit-Policy, remaining and reset in RateLimit', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(42, 4500), 'draft-10', { key: '203.0.113.7' })), [
      ['RateLimit-Policy', '"fixed-window";q=100;w=60'],
      ['RateLimit', '"fixed-window";r=42;t=5'],
    ]);
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
    assert.equal(
      rateLimitHeaders(decision(9, 500, undefined, burst), 'draft-10')['RateLimit-Policy'],
      '"burst";q=10;w=5',
    );
  });

  it('a policy that never rests has no w and no t; a concurrency limit counts requests in flight', () => {
    assert.deepEqual(fields(rateLimitHeaders(lifetimeAndSlots, 'draft-10')), [
      ['RateLimit-Policy', '"lifetime";q=3, "in-flight";q=5;qu="concurrent-requests"'],
      ['RateLimit', '"lifetime";r=2, "in-flight";r=4;t=10'],
    ]);
  });

  it('several policies: one item each, in the limiter order, each with its own figures', () => {
    assert.deepEqual(fields(rateLimitHeaders(burstDenied, 'draft-10')), [
      ['RateLimit-Policy', '"burst";q=10;w=5, "sustained";q=1000;w=3600'],
      ['RateLimit', '"burst";r=0;t=5, "sustained";r=990;t=7200'],
      ['Retry-After', '1'],
    ]);
  });

  it('a denial that no wait cures has no Retry-After', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(100, 0, -1), 'draft-10')), [
      ['RateLimit-Policy', '"fixed-window";q=100;w=60'],
      ['RateLimit', '"fixed-window";r=100;t=0'],
    ]);
  });
});

describe('Structured Fields (RFC 9651), as a parser reads them', () => {
  it("every style's fields parse, the figures where the drafts put them", () => {
    const key = { key: '203.0.113.7' };
    const draft6 = rateLimitHeaders(burstDenied, 'draft-6', key);
    assert.deepEqual(
      parseList(draft6['RateLimit-Policy'] ?? '').map(([quota, params]) => [
        quota,
        Object.fromEntries(params),
      ]),
      [
        [10, { w: 5 }],
        [1000, { w: 3600 }],
      ],
    );
    const draft7 = rateLimitHeaders(burstDenied, 'draft-7', key);
    assert.deepEqual(
      [...parseDictionary(draft7.RateLimit ?? '')].map(([name, [value]]) => [name, value]),
      [
        ['limit', 10],
        ['remaining', 0],
        ['reset', 5],
      ],
    );
    const draft8 = rateLimitHeaders(lifetimeAndSlots, 'draft-8', key);
    const policies = parseList(draft8['RateLimit-Policy'] ?? '');
    assert.deepEqual(
      policies.map(([name, params]) => [name, Object.fromEntries([...params].filter(([p]) => p !== 'pk'))]),
      [
        ['lifetime', { q: 3 }],
        ['in-flight', { q: 5, qu: 'concurrent-requests' }],
      ],
    );
    // The partition key is a Byte Sequence holding the hash's first 12 hex digits.
    const pk = policies.map(([, params]) => new TextDecoder().decode(params.get('pk') as ArrayBuffer));
    assert.deepEqual(pk, ['fec52565aa0c', 'fec52565aa0c']);
    assert.deepEqual(
      parseList(draft8.RateLimit ?? '').map(([name, params]) => [name, Object.fromEntries(params)]),
      [
        ['lifetime', { r: 2 }],
        ['in-flight', { r: 4, t: 10 }],
      ],
    );
    const draft10 = rateLimitHeaders(lifetimeAndSlots, 'draft-10');
    assert.deepEqual(
      parseList(draft10['RateLimit-Policy'] ?? '').map(([name, params]) => [
        name,
        Object.fromEntries(params),
      ]),
      [
        ['lifetime', { q: 3 }],
        ['in-flight', { q: 5, qu: 'concurrent-requests' }],
      ],
    );
  });
});
