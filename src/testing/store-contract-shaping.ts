// The store contract's part beyond counting: refunds, concurrency slots, lockouts and booked admissions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Decision, toDecision } from '../decision/decision.js';
import { rateLimitHeaders } from '../decision/headers.js';
import type { Limiter } from '../limiter/limiter.js';
import { concurrency, fixedWindow, tokenBucket } from '../policies/index.js';
import { encodeIdentifier } from '../stores/key.js';
import {
  figures,
  RATE_POLICIES,
  type RateCase,
  ratePolicy,
  register,
  type StoreCase,
  type StoreContext,
} from './store-contract-context.js';

/** Run on each rate policy, each test named by its policy. */
const REFUNDS_PER_RATE: Record<string, RateCase> = {
  'gives back exactly what was spent, never past a full quota': async ({ limiter }, make) => {
    const l = await limiter(make());
    assert.equal((await l.consume('r', { cost: 4 })).remaining, 1);
    await l.refund('r', { cost: 3 });
    assert.equal((await l.peek('r', { cost: 0 })).remaining, 4);
    await l.refund('r', { cost: 10 });
    assert.equal((await l.peek('r', { cost: 0 })).remaining, 5, 'never above the quota');
    assert.equal((await l.consume('r', { cost: 5 })).allowed, true);
    assert.equal((await l.consume('r')).allowed, false);
    await l.refund('never-seen');
    assert.equal(
      (await l.peek('never-seen', { cost: 0 })).remaining,
      5,
      'nothing to give back to a client at rest',
    );
  },
};

/** Run on each rate policy, after the windows' rollover: a refund that comes after the quota was found fresh. */
const LATE_REFUNDS_PER_RATE: Record<string, RateCase> = {
  'a refund named by its spend gives nothing to the quota a later request found fresh': async (
    { clock, limiter },
    make,
  ) => {
    const l = await limiter(make());
    const first = await l.consume('late', { cost: 5 });
    // Every policy here is at rest by then: the next request finds its whole quota, and spends it.
    clock.now += 20_000;
    assert.equal((await l.consume('late', { cost: 5 })).allowed, true);
    clock.now += 100;
    await l.refund('late', { cost: 5, spentAtMs: first.nowMs });
    assert.equal((await l.peek('late', { cost: 0 })).remaining, 0);
    assert.equal((await l.consume('late')).allowed, false);
  },
};

/** Run on the windows that roll over. */
const WINDOW_REFUNDS: Record<string, RateCase> = {
  'a refund into a window that has rolled over changes nothing': async ({ clock, limiter }, make) => {
    const l = await limiter(make());
    await l.consume('late', { cost: 5 });
    clock.now += 10_000;
    const before = await l.peek('late');
    await l.refund('late', { cost: 5 });
    assert.deepEqual(figures(await l.peek('late')), figures(before));
  },
};

/** Each policy's own way of giving back what a late refund names. */
const REFUNDS: Record<string, StoreCase> = {
  'token bucket: a late refund on a busy bucket gives back the tokens its refill has not reached': async ({
    clock,
    limiter,
  }) => {
    const l = await limiter(tokenBucket({ capacity: 5, refillPerSecond: 1 }));
    await l.consume('busy', { cost: 3 });
    // Spent behind three others, this token refills last: during the fourth second.
    const spent = await l.consume('busy');
    assert.equal(spent.resetMs, 4000);
    clock.now += 1000;
    await l.refund('busy', { spentAtMs: spent.nowMs });
    assert.equal((await l.peek('busy', { cost: 0 })).remaining, 2, 'the time alone promises nothing back');
    await l.refund('busy', { spent });
    assert.deepEqual(figures(await l.peek('busy', { cost: 0 })), {
      allowed: true,
      remaining: 3,
      resetMs: 2000,
      retryAfterMs: undefined,
    });
    // Given back once: asked again, it is refused, and gives nothing more.
    await assert.rejects(l.refund('busy', { spent }), { code: 'ERR_TOLLGATE_ARGUMENT' });
    assert.equal((await l.peek('busy', { cost: 0 })).remaining, 3);
    // A spend refunded once the refill has given it back gives nothing.
    const again = await l.consume('busy');
    clock.now += 6000;
    await l.consume('busy', { cost: 4 });
    await l.refund('busy', { spent: again });
    assert.equal((await l.peek('busy', { cost: 0 })).remaining, 1);
  },

  "sliding window: a refund drops its own entries, never a later request's": async ({ clock, limiter }) => {
    const l = await limiter(ratePolicy('sliding window'));
    const first = await l.consume('own', { cost: 2 });
    clock.now += 6000;
    await l.consume('own', { cost: 3 });
    await l.refund('own', { cost: 2, spentAtMs: first.nowMs });
    assert.equal((await l.peek('own', { cost: 0 })).remaining, 2);
    // When the refunded entries would have left anyway, the later three still count, until 16 s.
    clock.now += 4000;
    assert.deepEqual(figures(await l.peek('own', { cost: 0 })), {
      allowed: true,
      remaining: 2,
      resetMs: 6000,
      retryAfterMs: undefined,
    });
  },

  'sliding window counter: units spent in the previous window come off its weighted count': async ({
    clock,
    limiter,
  }) => {
    const l = await limiter(ratePolicy('sliding window counter'));
    const first = await l.consume('previous', { cost: 4 });
    // Halfway through the next window: the previous four weigh two.
    clock.now += 15_000;
    assert.equal((await l.peek('previous', { cost: 0 })).remaining, 3);
    await l.refund('previous', { cost: 2, spentAtMs: first.nowMs });
    assert.equal((await l.peek('previous', { cost: 0 })).remaining, 4);
  },
};

const CONCURRENCY: Record<string, StoreCase> = {
  'holds at most max slots, frees one on release (twice is harmless), and tells no fresh quota': async ({
    limiter,
  }) => {
    const l = await limiter(concurrency({ max: 2, leaseMs: '30s' }));
    const [a, b] = [await l.consume('c'), await l.consume('c')];
    assert.deepEqual([a.allowed, a.remaining, b.allowed, b.remaining], [true, 1, true, 0]);
    const denied = await l.consume('c');
    assert.equal(denied.allowed, false);
    assert.equal(denied.release, undefined, 'a denial holds nothing to release');
    assert.equal(denied.retryAfterMs, 1000, 'the retry hint: a slot frees when any request ends');
    await a.release?.();
    await a.release?.();
    const c = await l.consume('c');
    assert.equal(c.allowed, true, 'the released slot is free');
    assert.equal((await l.consume('c')).allowed, false, 'and only that one: releasing twice freed one');
    assert.match(rateLimitHeaders(c, 'draft-10')['RateLimit-Policy'] ?? '', /qu="concurrent-requests"/);
  },

  'frees a slot whose lease expired on the store clock, to the millisecond': async ({ clock, limiter }) => {
    const l = await limiter(concurrency({ max: 1, leaseMs: 1000 }));
    assert.equal((await l.consume('dies')).allowed, true);
    clock.now += 999;
    assert.equal((await l.consume('dies')).retryAfterMs, 1);
    clock.now += 1;
    assert.equal((await l.consume('dies')).allowed, true);
  },

  'never admits more than max under concurrent requests': async ({ limiter }) => {
    const l = await limiter(concurrency({ max: 3, leaseMs: '1m' }));
    const decisions = await Promise.all(Array.from({ length: 30 }, () => l.consume('hot')));
    assert.equal(decisions.filter((d) => d.allowed).length, 3);
  },

  'a denial by a rate policy spends nothing from the concurrency limit beside it, nor from a burst': async ({
    limiter,
  }) => {
    const l = await limiter([
      tokenBucket({ capacity: 3, refillPerSecond: 1, name: 'burst' }),
      fixedWindow({ limit: 2, windowMs: '1d', name: 'daily' }),
      concurrency({ max: 5, leaseMs: '1m', name: 'in-flight' }),
    ]);
    await l.consume('d');
    await l.consume('d');
    for (let i = 0; i < 3; i++) assert.equal((await l.consume('d')).allowed, false);
    const view = await l.peek('d', { cost: 0 });
    const remaining = (name: string) => view.policies.find((p) => p.policy.name === name)?.remaining;
    assert.deepEqual([remaining('burst'), remaining('in-flight')], [1, 3]);
  },
};

const LOCKOUTS: Record<string, StoreCase> = {
  'a denial locks out for blockMs, even once the bucket refilled, and Retry-After covers the block': async ({
    clock,
    limiter,
  }) => {
    const l = await limiter(tokenBucket({ capacity: 2, refillPerSecond: 1 }), { blockMs: 60_000 });
    await l.consume('b', { cost: 2 });
    const denied = await l.consume('b');
    assert.deepEqual([denied.allowed, denied.blocked, denied.retryAfterMs], [false, true, 60_000]);
    assert.equal(rateLimitHeaders(denied)['Retry-After'], '60');
    clock.now += 59_999;
    const still = await l.consume('b');
    assert.deepEqual(
      [still.allowed, still.blocked, still.retryAfterMs, still.remaining],
      [false, true, 1, 0],
    );
    clock.now += 1;
    assert.equal((await l.consume('b')).allowed, true, 'the block is over, and it spent nothing');
    assert.equal((await l.peek('b', { cost: 0 })).remaining, 1);
  },

  'block() extends and never shortens; unblock() lifts it; blockMs 0 blocks only on request': async ({
    clock,
    limiter,
  }) => {
    const l = await limiter(fixedWindow({ limit: 1, windowMs: '1s' }), { blockMs: 0 });
    await l.consume('m');
    assert.equal((await l.consume('m')).blocked, undefined, 'blockMs 0 starts no block');
    await l.block('m', '10s');
    await l.block('m', 1000);
    clock.now += 5000;
    assert.deepEqual(figures(await l.consume('m')), {
      allowed: false,
      remaining: 0,
      resetMs: 5000,
      retryAfterMs: 5000,
    });
    await l.unblock('m');
    assert.equal((await l.consume('m')).allowed, true);
  },

  'a blocked peek writes nothing and reports the block': async ({ clock, limiter }) => {
    const l = await limiter(tokenBucket({ capacity: 1, refillPerSecond: 1 }), { blockMs: 5000 });
    await l.consume('p');
    await l.consume('p');
    assert.equal((await l.peek('p')).retryAfterMs, 5000);
    clock.now += 5000;
    assert.equal((await l.peek('p')).allowed, true);
  },
};

const BOOKED_ADMISSIONS: Record<string, StoreCase> = {
  'books waiters on a token bucket first come, first served, one interval apart': async ({
    clock,
    limiter,
  }) => {
    const l = await limiter(tokenBucket({ capacity: 1, refillPerSecond: 10 }));
    await l.consume('q');
    const booked: Decision[] = [];
    for (let i = 0; i < 3; i++) booked.push(await book(l, 'q', 1000));
    assert.deepEqual(
      booked.map((d) => [d.allowed, d.delayMs, d.nowMs - clock.now]),
      [
        [true, 100, 100],
        [true, 200, 200],
        [true, 300, 300],
      ],
    );
    const tooFar = await book(l, 'q', 350);
    assert.deepEqual([tooFar.allowed, tooFar.retryAfterMs], [false, 400]);
    assert.equal((await l.consume('q')).allowed, false, 'a plain request queues behind the booked ones');
  },

  'books nothing on a window: it is asked again at its retry time': async ({ limiter }) => {
    const l = await limiter(fixedWindow({ limit: 1, windowMs: '1s' }));
    await l.consume('w');
    const decision = await book(l, 'w', 10_000);
    assert.deepEqual([decision.allowed, decision.delayMs, decision.retryAfterMs], [false, undefined, 1000]);
  },
};

/** Registers each case once per labelled rate policy, as `<label>: <title>`. */
function registerPerRate(
  cases: Readonly<Record<string, RateCase>>,
  context: StoreContext,
  labels: readonly string[],
): void {
  for (const [title, run] of Object.entries(cases))
    for (const label of labels) it(`${label}: ${title}`, () => run(context, () => ratePolicy(label)));
}

export function shapingContract(context: StoreContext): void {
  describe('refunds', () => {
    const labels = Object.keys(RATE_POLICIES);
    registerPerRate(REFUNDS_PER_RATE, context, labels);
    registerPerRate(WINDOW_REFUNDS, context, ['fixed window', 'sliding window counter']);
    registerPerRate(LATE_REFUNDS_PER_RATE, context, labels);
    register(REFUNDS, context);
  });
  describe('concurrency', () => register(CONCURRENCY, context));
  describe('lockouts', () => register(LOCKOUTS, context));
  describe('booked admissions', () => register(BOOKED_ADMISSIONS, context));
}

/** A consume that may be booked up to `maxDelayMs` ahead, as `wait` asks it of the store. */
async function book(l: Limiter, identifier: string, maxDelayMs: number): Promise<Decision> {
  const response = await l.store.evaluate({
    scope: l.scope,
    id: encodeIdentifier(identifier),
    policies: l.policies,
    action: 'consume',
    cost: 1,
    lease: '',
    maxDelayMs,
  });
  return toDecision(l.policies, response);
}
