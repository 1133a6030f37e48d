// The X-RateLimit set on its own (legacyHeaders) and its reset's two forms (legacyReset), in rateLimitHeaders and
// through the gate's options: hand-computed values, on a fixed clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LEGACY_RESETS } from '../../src/decision/headers.js';
import { createGate } from '../../src/gate/gate.js';
import { type GateOptions, resolveHeaders } from '../../src/gate/options.js';
import { fixedWindow, MemoryStore, rateLimitHeaders } from '../../src/index.js';
import { pointed } from '../harness/error-pointer.js';
import { decision, fields, NOW, PK_203_0_113_7, PK_UNKNOWN } from './headers-fixtures.js';

describe('the legacy set', () => {
  it('comes first, beside any style, when asked for', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(42, 4500), 'draft-10', { legacyHeaders: true })), [
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '42'],
      ['X-RateLimit-Reset', '2026-01-01T00:00:04.500Z'],
      ['RateLimit-Policy', '"fixed-window";q=100;w=60'],
      ['RateLimit', '"fixed-window";r=42;t=5'],
    ]);
  });

  it("is on by default with 'draft-6' only, and can be turned off there", () => {
    const legacy = (style: Parameters<typeof rateLimitHeaders>[1], legacyHeaders?: boolean) =>
      Object.keys(
        rateLimitHeaders(decision(1, 1000), style, legacyHeaders === undefined ? {} : { legacyHeaders }),
      )
        .filter((name) => name.startsWith('X-'))
        .join(' ');
    const all = 'X-RateLimit-Limit X-RateLimit-Remaining X-RateLimit-Reset';
    assert.equal(legacy('draft-6'), all);
    assert.equal(legacy('draft-6', false), '');
    for (const style of ['draft-7', 'draft-8', 'draft-10'] as const) {
      assert.equal(legacy(style), '');
      assert.equal(legacy(style, true), all);
    }
  });

  it('alone (style false): the legacy set, and Retry-After on a denial', () => {
    assert.deepEqual(fields(rateLimitHeaders(decision(0, 30_000, 12_345), false, { legacyHeaders: true })), [
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '2026-01-01T00:00:30.000Z'],
      ['Retry-After', '13'],
    ]);
  });

  it('leaves X-RateLimit-Reset out when the policy never comes back to rest, in either form', () => {
    for (const legacyReset of LEGACY_RESETS) {
      assert.deepEqual(
        fields(rateLimitHeaders(decision(2, -1), false, { legacyHeaders: true, legacyReset })),
        [
          ['X-RateLimit-Limit', '100'],
          ['X-RateLimit-Remaining', '2'],
        ],
      );
    }
  });

  it('ISO-8601 to the millisecond, from the decision clock, whichever instant came before', () => {
    const reset = (ms: number) => rateLimitHeaders(decision(1, ms))['X-RateLimit-Reset'];
    // In this order on purpose: instants in one second, the next one, back, and another day.
    assert.equal(reset(0), '2026-01-01T00:00:00.000Z');
    assert.equal(reset(9), '2026-01-01T00:00:00.009Z');
    assert.equal(reset(10), '2026-01-01T00:00:00.010Z');
    assert.equal(reset(99), '2026-01-01T00:00:00.099Z');
    assert.equal(reset(100), '2026-01-01T00:00:00.100Z');
    assert.equal(reset(999), '2026-01-01T00:00:00.999Z');
    assert.equal(reset(1000), '2026-01-01T00:00:01.000Z');
    assert.equal(reset(1), '2026-01-01T00:00:00.001Z');
    assert.equal(reset(90_061_001), '2026-01-02T01:01:01.001Z');
    assert.equal(reset(59_999), '2026-01-01T00:00:59.999Z');
  });

  it('epoch seconds rounded up, so a client never comes back early', () => {
    const reset = (ms: number) =>
      rateLimitHeaders(decision(1, ms), 'draft-6', { legacyReset: 'epoch-seconds' })['X-RateLimit-Reset'];
    assert.equal(reset(0), '1767225600');
    assert.equal(reset(1), '1767225601');
    assert.equal(reset(999), '1767225601');
    assert.equal(reset(1000), '1767225601');
    assert.equal(reset(1001), '1767225602');
    assert.equal(reset(4500), '1767225605');
    assert.equal(reset(86_400_000), '1767312000');
  });

  it('LEGACY_RESETS names both forms', () => {
    assert.deepEqual(LEGACY_RESETS, ['iso-8601', 'epoch-seconds']);
  });
});

describe("the gate's header options", () => {
  const figures = (options: Parameters<typeof resolveHeaders>[0]) =>
    fields(resolveHeaders(options)?.(decision(0, 30_000, 12_345), '203.0.113.7') ?? {});

  it("default: 'draft-6' with the legacy set, its reset in ISO-8601", () => {
    const draft6 = fields(rateLimitHeaders(decision(0, 30_000, 12_345)));
    assert.deepEqual(figures({}), draft6);
    assert.deepEqual(figures({ headers: true }), draft6);
    assert.deepEqual(figures({ headers: 'draft-6', legacyHeaders: true, legacyReset: 'iso-8601' }), draft6);
  });

  it('each option on its own', () => {
    assert.equal(resolveHeaders({ headers: false }), undefined);
    assert.equal(
      resolveHeaders({ headers: false, legacyHeaders: false, legacyReset: 'epoch-seconds' }),
      undefined,
    );
    assert.deepEqual(figures({ headers: false, legacyHeaders: true, legacyReset: 'epoch-seconds' }), [
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '1767225630'],
      ['Retry-After', '13'],
    ]);
    assert.deepEqual(figures({ legacyHeaders: false }), [
      ['RateLimit-Policy', '100;w=60'],
      ['RateLimit-Limit', '100'],
      ['RateLimit-Remaining', '0'],
      ['RateLimit-Reset', '30'],
      ['Retry-After', '13'],
    ]);
    assert.deepEqual(figures({ headers: 'draft-8', legacyReset: 'epoch-seconds' }), [
      ['RateLimit', '"fixed-window"; r=0; t=30'],
      ['RateLimit-Policy', `"fixed-window"; q=100; w=60; pk=:${PK_203_0_113_7}:`],
      ['Retry-After', '13'],
    ]);
  });

  it('are refused at wire-up with an error naming the option', () => {
    const refused = (options: unknown, option: string, message: string) =>
      assert.throws(
        () => resolveHeaders(options as Parameters<typeof resolveHeaders>[0]),
        (error: { code?: string; option?: string; message?: string }) =>
          error.code === 'ERR_TOLLGATE_CONFIG' &&
          error.option === option &&
          error.message === pointed(message),
      );
    const styles = "'draft-6', 'draft-7', 'draft-8', 'draft-10'";
    refused(
      { headers: 'draft-9' },
      'headers',
      `\`headers\` must be a boolean or one of ${styles} (received "draft-9")`,
    );
    refused(
      { headers: null },
      'headers',
      `\`headers\` must be a boolean or one of ${styles} (received null)`,
    );
    refused({ legacyHeaders: 'yes' }, 'legacyHeaders', '`legacyHeaders` must be a boolean (received "yes")');
    refused({ legacyHeaders: null }, 'legacyHeaders', '`legacyHeaders` must be a boolean (received null)');
    refused(
      { legacyReset: 'unix' },
      'legacyReset',
      `\`legacyReset\` must be one of 'iso-8601', 'epoch-seconds' (received "unix")`,
    );
    refused(
      { legacyReset: null },
      'legacyReset',
      `\`legacyReset\` must be one of 'iso-8601', 'epoch-seconds' (received null)`,
    );
  });

  it('reach the response through the gate, the partition key from the identity counted', async () => {
    const gate = (options: Partial<GateOptions<string>>) => {
      const { check } = createGate<string>(
        {
          policy: fixedWindow({ limit: 2, windowMs: 60_000 }),
          store: new MemoryStore({ clock: () => NOW, autoCleanup: false }),
          scope: 'headers',
          identifier: (req) => req,
          logger: { warn() {}, error() {} },
          ...options,
        },
        { name: 'rateLimit', identifier: (req) => req },
      );
      return async (req: string) => {
        const outcome = await check(req);
        assert.notEqual(outcome.action, 'fail');
        return outcome.action === 'fail' ? [] : [outcome.action, ...fields(outcome.headers)];
      };
    };
    const draft8 = gate({ headers: 'draft-8' });
    assert.deepEqual(await draft8('203.0.113.7'), [
      'next',
      ['RateLimit', '"fixed-window"; r=1; t=60'],
      ['RateLimit-Policy', `"fixed-window"; q=2; w=60; pk=:${PK_203_0_113_7}:`],
    ]);
    // No identity is counted as 'unknown', and that is the key the client is told about.
    assert.deepEqual(await draft8(''), [
      'next',
      ['RateLimit', '"fixed-window"; r=1; t=60'],
      ['RateLimit-Policy', `"fixed-window"; q=2; w=60; pk=:${PK_UNKNOWN}:`],
    ]);
    const legacyOnly = gate({ headers: false, legacyHeaders: true, legacyReset: 'epoch-seconds' });
    const limit = ['X-RateLimit-Limit', '2'];
    const reset = ['X-RateLimit-Reset', '1767225660'];
    assert.deepEqual(await legacyOnly('203.0.113.7'), ['next', limit, ['X-RateLimit-Remaining', '1'], reset]);
    assert.deepEqual(await legacyOnly('203.0.113.7'), ['next', limit, ['X-RateLimit-Remaining', '0'], reset]);
    assert.deepEqual(await legacyOnly('203.0.113.7'), [
      'reject',
      limit,
      ['X-RateLimit-Remaining', '0'],
      reset,
      ['Retry-After', '60'],
    ]);
    const silent = gate({ headers: false });
    for (let i = 0; i < 3; i++) assert.deepEqual((await silent('203.0.113.7')).slice(1), []);
  });
});
