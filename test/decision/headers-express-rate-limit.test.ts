// Tollgate's draft-6/7/8 and legacy fields against express-rate-limit 8's own, byte for byte and in the same order,
// for the same figures: its middleware runs on a store answering those figures, a frozen Date.now and a response
// that records what it is told to set.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rateLimit, type Store } from 'express-rate-limit';
import type { HeaderStyle } from '../../src/decision/headers.js';
import { fixedWindow, rateLimitHeaders } from '../../src/index.js';
import { decision, fields, NOW } from './headers-fixtures.js';

interface Figures {
  readonly limit: number;
  readonly windowMs: number;
  /** Requests counted in the window, this one included: above `limit` is a denial. */
  readonly hits: number;
  readonly resetMs: number;
  readonly key: string;
  /** The policy's name, and express-rate-limit's `identifier`. */
  readonly name: string;
}

type Style = Extract<HeaderStyle, 'draft-6' | 'draft-7' | 'draft-8'> | false;

async function expressRateLimit(
  figures: Figures,
  style: Style,
  legacy: boolean,
): Promise<[string, string][]> {
  const store: Store = {
    increment: async () => ({ totalHits: figures.hits, resetTime: new Date(NOW + figures.resetMs) }),
    decrement: async () => {},
    resetKey: async () => {},
  };
  const middleware = rateLimit({
    limit: figures.limit,
    windowMs: figures.windowMs,
    standardHeaders: style,
    legacyHeaders: legacy,
    identifier: figures.name,
    keyGenerator: () => figures.key,
    store,
    validate: false,
  });
  const set: [string, string][] = [];
  const response = {
    headersSent: false,
    writableEnded: false,
    setHeader: (name: string, value: string) => set.push([name, value]),
    // Each middleware appends its own item; one limiter appends once.
    append: (name: string, value: string) => set.push([name, value]),
    status: () => response,
    send: () => {},
  };
  // biome-ignore lint/suspicious/noExplicitAny: a recording stand-in for Express's request and response
  await middleware({ ip: '127.0.0.1' } as any, response as any, () => {});
  // Node sets Date on every response anyway; express-rate-limit sets it again beside its legacy reset.
  return set.filter(([name]) => name !== 'Date');
}

function tollgate(figures: Figures, style: Style, legacy: boolean): [string, string][] {
  const policy = fixedWindow({ limit: figures.limit, windowMs: figures.windowMs, name: figures.name });
  // A fixed window's denial waits for the window's end, its reset.
  const denied = figures.hits > figures.limit;
  const remaining = Math.max(figures.limit - figures.hits, 0);
  const decided = decision(remaining, figures.resetMs, denied ? figures.resetMs : undefined, policy);
  return fields(
    rateLimitHeaders(decided, style, {
      legacyHeaders: legacy,
      legacyReset: 'epoch-seconds',
      key: figures.key,
    }),
  );
}

const CASES: readonly Figures[] = [
  { limit: 5, windowMs: 60_000, hits: 1, resetMs: 60_000, key: '203.0.113.7', name: 'fixed-window' },
  { limit: 5, windowMs: 60_000, hits: 5, resetMs: 12_345, key: '2001:db8:1:200::/56', name: '5-in-1min' },
  { limit: 5, windowMs: 60_000, hits: 6, resetMs: 1001, key: 'user:42', name: 'fixed-window' },
  { limit: 5, windowMs: 60_000, hits: 9, resetMs: 1000, key: '203.0.113.7', name: 'fixed-window' },
  { limit: 1, windowMs: 1500, hits: 2, resetMs: 999, key: '203.0.113.7', name: 'odd' },
  { limit: 1, windowMs: 1500, hits: 1, resetMs: 1, key: 'unknown', name: 'odd' },
  { limit: 1000, windowMs: 86_400_000, hits: 1, resetMs: 86_399_999, key: '::1', name: 'daily' },
];

describe("express-rate-limit 8's fields, byte for byte", () => {
  for (const style of ['draft-6', 'draft-7', 'draft-8', false] as const) {
    for (const legacy of [true, false]) {
      it(`standardHeaders ${style}, legacyHeaders ${legacy}`, async (t) => {
        t.mock.method(Date, 'now', () => NOW);
        for (const figures of CASES) {
          const theirs = await expressRateLimit(figures, style, legacy);
          assert.deepEqual(tollgate(figures, style, legacy), theirs, JSON.stringify(figures));
        }
      });
    }
  }

  it('the comparison sees every field: a denial with both sets is eight of them', async (t) => {
    t.mock.method(Date, 'now', () => NOW);
    assert.deepEqual(await expressRateLimit(CASES[2] as Figures, 'draft-6', true), [
      ['X-RateLimit-Limit', '5'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '1767225602'],
      ['RateLimit-Policy', '5;w=60'],
      ['RateLimit-Limit', '5'],
      ['RateLimit-Remaining', '0'],
      ['RateLimit-Reset', '2'],
      ['Retry-After', '2'],
    ]);
  });
});
