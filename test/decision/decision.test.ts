// Which policy binds a decision of several, and what the decision reports from it, against fixed expectations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toDecision } from '../../src/decision/decision.js';
import { type AnyPolicy, createLimiter, fixedWindow, MemoryStore, tokenBucket } from '../../src/index.js';
import { lockout } from '../../src/policies/lockout.js';
import type { PolicyResult } from '../../src/stores/index.js';
import type { StoreResponse } from '../../src/stores/store.js';

const a = fixedWindow({ limit: 10, windowMs: 1000, name: 'a' });
const b = fixedWindow({ limit: 20, windowMs: 1000, name: 'b' });
const c = fixedWindow({ limit: 30, windowMs: 1000, name: 'c' });
const policies = [a, b, c];

const allow = (remaining: number, resetMs: number): PolicyResult => ({
  allowed: true,
  remaining,
  resetMs,
  retryAfterMs: 0,
});
const deny = (remaining: number, resetMs: number, retryAfterMs: number): PolicyResult => ({
  allowed: false,
  remaining,
  resetMs,
  retryAfterMs,
});

function decide(allowed: boolean, ...results: PolicyResult[]) {
  const response: StoreResponse = { allowed, results, nowMs: 5000 };
  return toDecision(policies.slice(0, results.length), response);
}

/** The figures a client sees: which limit, how many left, until when, and how long to wait. */
function figures(decision: ReturnType<typeof decide>) {
  const { limit, remaining, resetMs, retryAfterMs } = decision;
  return { limit, remaining, resetMs, retryAfterMs };
}

describe('toDecision: the binding policy', () => {
  it('allowed: the policy with the fewest units left binds, wherever it stands', () => {
    assert.deepEqual(figures(decide(true, allow(9, 100), allow(4, 200), allow(6, 300))), {
      limit: 20,
      remaining: 4,
      resetMs: 200,
      retryAfterMs: undefined,
    });
    assert.deepEqual(figures(decide(true, allow(3, 100), allow(4, 200), allow(6, 300))).limit, 10);
    assert.deepEqual(figures(decide(true, allow(9, 100), allow(8, 200), allow(6, 300))).limit, 30);
  });

  it('allowed: of policies equally low, the first binds', () => {
    assert.deepEqual(figures(decide(true, allow(5, 100), allow(5, 200), allow(5, 300))), {
      limit: 10,
      remaining: 5,
      resetMs: 100,
      retryAfterMs: undefined,
    });
  });

  it('denied: the denying policy binds, though another has fewer units left', () => {
    // b has 0 left after this request, but only c denied it (it reports its unspent view).
    assert.deepEqual(figures(decide(false, allow(2, 100), allow(0, 200), deny(1, 900, 700))), {
      limit: 30,
      remaining: 1,
      resetMs: 900,
      retryAfterMs: 700,
    });
  });

  it('denied by several: the longest wait binds, and of equal waits the first', () => {
    assert.deepEqual(figures(decide(false, deny(0, 100, 100), deny(0, 800, 800), deny(0, 300, 300))), {
      limit: 20,
      remaining: 0,
      resetMs: 800,
      retryAfterMs: 800,
    });
    assert.equal(decide(false, deny(0, 100, 100), deny(0, 300, 300), deny(0, 800, 800)).limit, 30);
    assert.equal(decide(false, deny(1, 500, 500), deny(0, 500, 500)).limit, 10);
  });

  it('denied: a wait that no time cures binds over any finite wait, and leaves no retryAfterMs', () => {
    const cureless = decide(false, deny(0, 100, 60_000), deny(2, 0, -1), deny(0, 300, 90_000));
    assert.deepEqual(figures(cureless), { limit: 20, remaining: 2, resetMs: 0, retryAfterMs: undefined });
    assert.equal('retryAfterMs' in cureless, false);
    assert.equal(decide(false, deny(2, 0, -1), deny(0, 100, 60_000)).limit, 10);
    // Of two that no wait cures, the first.
    assert.equal(decide(false, deny(2, 0, -1), deny(3, 0, -1)).limit, 10);
  });

  it('a denial at a wait of 0 still carries it (the request may be retried at once), and ranks as a wait', () => {
    assert.equal(decide(false, deny(0, 0, 0)).retryAfterMs, 0);
    // Over an admitting policy, however few units that one has left.
    assert.deepEqual(figures(decide(false, allow(0, 100), deny(3, 50, 0))), {
      limit: 20,
      remaining: 3,
      resetMs: 50,
      retryAfterMs: 0,
    });
    // Below any longer wait, before it or after it.
    assert.equal(decide(false, deny(0, 0, 0), deny(0, 100, 100)).limit, 20);
    assert.equal(decide(false, deny(0, 100, 100), deny(0, 0, 0)).limit, 10);
  });

  it("keeps every policy's own result, in the limiter's order, and the store's clock and fail mode", () => {
    const response: StoreResponse = {
      allowed: false,
      results: [allow(3, 100), deny(0, 200, 150)],
      nowMs: 1234,
      degraded: 'fallback',
    };
    const decision = toDecision([a, b], response);
    assert.deepEqual(
      decision.policies.map(({ policy, ...result }) => ({ name: policy.name, ...result })),
      [
        { name: 'a', allowed: true, remaining: 3, resetMs: 100, retryAfterMs: 0 },
        { name: 'b', allowed: false, remaining: 0, resetMs: 200, retryAfterMs: 150 },
      ],
    );
    assert.equal(decision.allowed, false);
    assert.equal(decision.nowMs, 1234);
    assert.equal(decision.degraded, 'fallback');
    assert.equal('degraded' in decide(true, allow(1, 1)), false);
  });
});

describe("toDecision: a limiter's lockout", () => {
  const locked = [a, b, lockout(60_000)];
  const answer = (response: Partial<StoreResponse> & Pick<StoreResponse, 'results'>) =>
    toDecision(locked, { allowed: false, nowMs: 5000, ...response });

  it('open: is never shown, and decides nothing', () => {
    const decision = answer({ allowed: true, results: [allow(3, 100), allow(7, 200), allow(1, 0)] });
    assert.deepEqual(
      decision.policies.map((p) => [p.policy.name, p.remaining]),
      [
        ['a', 3],
        ['b', 7],
      ],
    );
    assert.deepEqual(
      [figures(decision), decision.blocked],
      [{ limit: 10, remaining: 3, resetMs: 100, retryAfterMs: undefined }, undefined],
    );
  });

  it('blocking: every policy has nothing left, and no retry or rest before the block ends', () => {
    const decision = answer({ results: [allow(3, 100), deny(0, 90_000, 70_000), deny(0, 60_000, 60_000)] });
    assert.equal(decision.blocked, true);
    assert.deepEqual(
      decision.policies.map(({ allowed, remaining, resetMs, retryAfterMs }) => [
        allowed,
        remaining,
        resetMs,
        retryAfterMs,
      ]),
      [
        [false, 0, 60_000, 60_000],
        [false, 0, 90_000, 70_000],
      ],
    );
    assert.deepEqual(figures(decision), { limit: 20, remaining: 0, resetMs: 90_000, retryAfterMs: 70_000 });
  });

  it('is told by its name: a policy of its own that acts on denials too is shown, and blocks nothing', () => {
    const own = { ...b, onDenial: lockout(1000).onDenial as NonNullable<AnyPolicy['onDenial']> };
    const decision = toDecision([a, own], {
      allowed: false,
      nowMs: 5000,
      results: [allow(3, 100), deny(0, 900, 900)],
    });
    assert.deepEqual(
      [decision.policies.map((p) => p.policy.name), decision.blocked, decision.retryAfterMs],
      [['a', 'b'], undefined, 900],
    );
  });

  it("a policy that no wait helps still says so while blocked; a fail mode's answer is no block", () => {
    const never = answer({ results: [deny(5, -1, -1), allow(7, 0), deny(0, 1000, 1000)] });
    assert.deepEqual([never.blocked, never.retryAfterMs, never.policies[0]?.resetMs], [true, undefined, -1]);
    for (const degraded of ['fail-open', 'fail-closed'] as const) {
      const guessed = answer({ degraded, results: [deny(0, 0, 500), deny(0, 0, 500), deny(0, 0, 500)] });
      assert.deepEqual([guessed.blocked, guessed.retryAfterMs], [undefined, 500], degraded);
    }
    const local = answer({ degraded: 'fallback', results: [allow(1, 0), allow(1, 0), deny(0, 900, 900)] });
    assert.deepEqual([local.blocked, local.retryAfterMs], [true, 900]);
  });
});

describe('a limiter of several policies, end to end on the memory engine', () => {
  // A burst of 5 refilling 1 per second, and 8 per 10-second window.
  function setup() {
    const clock = { now: 1_000_000 };
    const limiter = createLimiter({
      policy: [
        tokenBucket({ capacity: 5, refillPerSecond: 1, name: 'burst' }),
        fixedWindow({ limit: 8, windowMs: 10_000, name: 'window' }),
      ],
      store: new MemoryStore({ clock: () => clock.now, autoCleanup: false }),
    });
    return { clock, limiter };
  }
  const pick = ({
    allowed,
    limit,
    remaining,
    resetMs,
    retryAfterMs,
  }: Awaited<ReturnType<ReturnType<typeof setup>['limiter']['consume']>>) => ({
    allowed,
    limit,
    remaining,
    resetMs,
    retryAfterMs,
  });

  it('the burst binds while it is the tighter, then the window', async () => {
    const { clock, limiter } = setup();
    // 4 at once: the bucket has 1 left (full again in 4 s), the window 4 (ends in 10 s).
    assert.deepEqual(pick(await limiter.consume('x', { cost: 4 })), {
      allowed: true,
      limit: 5,
      remaining: 1,
      resetMs: 4000,
      retryAfterMs: undefined,
    });
    // 2 more now: the bucket denies (1 token, the second comes in 1 s); nothing is spent from the window.
    assert.deepEqual(pick(await limiter.consume('x', { cost: 2 })), {
      allowed: false,
      limit: 5,
      remaining: 1,
      resetMs: 4000,
      retryAfterMs: 1000,
    });
    // 4 s later the bucket is full again, and the window, with 4 left, binds.
    clock.now += 4000;
    assert.deepEqual(pick(await limiter.consume('x', { cost: 1 })), {
      allowed: true,
      limit: 8,
      remaining: 3,
      resetMs: 6000,
      retryAfterMs: undefined,
    });
    clock.now += 3000;
    assert.deepEqual(pick(await limiter.consume('x', { cost: 3 })), {
      allowed: true,
      limit: 8,
      remaining: 0,
      resetMs: 3000,
      retryAfterMs: undefined,
    });
    // The window is spent for 3 s more, while the bucket holds 3: the window's wait is the one reported.
    assert.deepEqual(pick(await limiter.consume('x')), {
      allowed: false,
      limit: 8,
      remaining: 0,
      resetMs: 3000,
      retryAfterMs: 3000,
    });
  });

  it('a cost beyond the bucket, which no wait cures, binds over the window that a wait would cure', async () => {
    const { limiter } = setup();
    await limiter.consume('y', { cost: 5 });
    // The window denies 6 more too (5 + 6 > 8), until it ends in 10 s.
    assert.equal((await limiter.peek('y', { cost: 6 })).policies[1]?.retryAfterMs, 10_000);
    const decision = await limiter.peek('y', { cost: 6 });
    assert.deepEqual(pick(decision), {
      allowed: false,
      limit: 5,
      remaining: 0,
      resetMs: 5000,
      retryAfterMs: undefined,
    });
  });
});
