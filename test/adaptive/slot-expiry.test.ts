// Unit tests of how an adaptive limit's slot ends other than by a plain release: held past maxHoldMs, freed
// unmeasured, or released through a `dropped` option or an algorithm that throws.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AdaptiveConcurrencyOptions,
  adaptiveConcurrency,
} from '../../src/adaptive/adaptive-concurrency.js';
import type { LimitSample } from '../../src/adaptive/algorithms/algorithm.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { concurrency } from '../../src/policies/concurrency.js';
import type { LocalAdmission, LocalSlot } from '../../src/policies/local-policy.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { ManualClock, StubAlgorithm } from './stub-algorithm.js';

/** A limit at `limit` on a stub algorithm and a clock moved by hand; `hold` takes a slot that must be free. */
function limited(limit: number, options: Omit<AdaptiveConcurrencyOptions, 'algorithm' | 'clock'> = {}) {
  const algorithm = new StubAlgorithm(limit);
  const clock = new ManualClock();
  const policy = adaptiveConcurrency({ ...options, algorithm, clock: clock.read });
  const hold = (at: number): LocalSlot => {
    clock.nowMs = at;
    const { slot } = policy.admit(undefined);
    assert.ok(slot !== undefined, `admitted at ${at}`);
    return slot;
  };
  const counts = () => {
    const { inFlight, completed, rejected, dropped } = policy.stats().partitions[0] ?? {};
    return { inFlight, completed, rejected, dropped };
  };
  return { policy, algorithm, clock, hold, counts };
}

/** A stub algorithm whose every sample throws, after recording it. */
class ThrowingAlgorithm extends StubAlgorithm {
  override sample(sample: LimitSample): number {
    super.sample(sample);
    throw new Error('sample failed');
  }
}

/**
 * Whether a queued admission has been granted, read after the microtasks queued so far: on mocked timers, so that
 * only a release, not the line's retry timer, can have served it.
 */
function served(queued: Promise<LocalAdmission>): () => Promise<boolean> {
  let granted = false;
  void queued.then(({ result }) => {
    granted = result.allowed;
  });
  return async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return granted;
  };
}

describe('adaptiveConcurrency: maxHoldMs', () => {
  it('frees a slot held maxHoldMs as dropped when an admission would otherwise be refused, and not before', () => {
    const { policy, algorithm, clock, hold, counts } = limited(2, { maxHoldMs: 1000 });
    hold(0);
    hold(400);
    clock.nowMs = 999;
    assert.equal(policy.admit(undefined).result.allowed, false);
    assert.deepEqual(algorithm.samples, []);
    clock.nowMs = 1000;
    assert.deepEqual(policy.admit(undefined).result, {
      allowed: true,
      remaining: 0,
      resetMs: 0,
      retryAfterMs: 0,
    });
    // Only the slot of 0 was past the limit: the one of 400 is still held, beside the new one.
    assert.deepEqual(algorithm.samples, [{ rttMs: 1000, inFlight: 1, dropped: true }]);
    assert.deepEqual(counts(), { inFlight: 2, completed: 1, rejected: 1, dropped: 1 });
  });

  it('keeps a slot held past maxHoldMs while the limit has room, 60 seconds by default', () => {
    const { policy, algorithm, clock, hold, counts } = limited(2);
    hold(0);
    clock.nowMs = 59_999;
    assert.equal(policy.admit(undefined).result.allowed, true);
    assert.equal(policy.admit(undefined).result.allowed, false);
    clock.nowMs = 60_000;
    assert.equal(policy.admit(undefined).result.allowed, true);
    assert.deepEqual(algorithm.samples, [{ rttMs: 60_000, inFlight: 1, dropped: true }]);
    assert.deepEqual(counts(), { inFlight: 2, completed: 1, rejected: 1, dropped: 1 });
  });

  it('changes nothing on a late release or cancel of an expired slot', () => {
    const { policy, algorithm, clock, hold, counts } = limited(1, { maxHoldMs: 100 });
    const expired = hold(0);
    clock.nowMs = 100;
    const fresh = policy.admit(undefined).slot;
    assert.ok(fresh !== undefined);
    expired.release({ status: 200 });
    expired.cancel();
    assert.equal(algorithm.samples.length, 1);
    assert.deepEqual(counts(), { inFlight: 1, completed: 1, rejected: 0, dropped: 1 });
    assert.equal(policy.admit(undefined).result.allowed, false);
    fresh.release({ status: 200 });
    assert.deepEqual(counts(), { inFlight: 0, completed: 2, rejected: 1, dropped: 1 });
  });

  it('expires the oldest first, and only the slots past the limit', () => {
    const { policy, algorithm, clock, hold, counts } = limited(4, { maxHoldMs: 1000 });
    hold(0);
    hold(100);
    hold(500);
    hold(600);
    clock.nowMs = 1100;
    assert.equal(policy.admit(undefined).result.allowed, true);
    assert.deepEqual(algorithm.samples, [
      { rttMs: 1100, inFlight: 1, dropped: true },
      { rttMs: 1000, inFlight: 2, dropped: true },
    ]);
    assert.deepEqual(counts(), { inFlight: 3, completed: 2, rejected: 0, dropped: 2 });
  });

  it('still refuses a partition that expiring leaves beyond its share', () => {
    const { policy, clock } = limited(4, { maxHoldMs: 500, partitions: { a: 0.5, b: 0.5 } });
    assert.ok(policy.admit('b').slot !== undefined);
    clock.nowMs = 600;
    assert.ok(policy.admit('a').slot !== undefined);
    assert.ok(policy.admit('a').slot !== undefined);
    // b's slot expires, but b was asked of within ACTIVE_MS: its whole guarantee stays reserved.
    assert.equal(policy.admit('a').result.allowed, false);
    assert.deepEqual(
      policy
        .stats()
        .partitions.map(({ name, inFlight, dropped, rejected }) => [name, inFlight, dropped, rejected]),
      [
        ['a', 2, 0, 1],
        ['b', 0, 1, 0],
        ['', 0, 0, 0],
      ],
    );
  });
});

describe('adaptiveConcurrency: a release unmeasured', () => {
  it('frees the slot on release({ measured: false }), counting and sampling nothing', async () => {
    const { policy, algorithm, hold, counts } = limited(1);
    const slot = hold(0);
    const waiting = policy.queue({ partition: undefined, maxWaitMs: 60_000, signal: undefined });
    slot.release({ status: 503, measured: false });
    assert.deepEqual(algorithm.samples, []);
    assert.deepEqual(counts(), { inFlight: 1, completed: 0, rejected: 0, dropped: 0 });
    (await waiting).slot?.release({ measured: true });
    assert.equal(algorithm.samples.length, 1);
    assert.deepEqual(counts(), { inFlight: 0, completed: 1, rejected: 0, dropped: 0 });
  });
});

describe('adaptiveConcurrency: a release that throws', () => {
  it('frees the slot and serves a waiter when the dropped option throws', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { policy, hold, counts } = limited(1, {
      dropped: () => {
        throw new Error('dropped failed');
      },
    });
    const slot = hold(0);
    const waiting = served(policy.queue({ partition: undefined, maxWaitMs: 60_000, signal: undefined }));
    assert.throws(() => slot.release({ status: 500 }), new Error('dropped failed'));
    assert.equal(await waiting(), true);
    assert.deepEqual(counts(), { inFlight: 1, completed: 0, rejected: 0, dropped: 0 });
  });

  it('frees the slot and serves a waiter when the algorithm sample throws', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const algorithm = new ThrowingAlgorithm(1);
    const policy = adaptiveConcurrency({ algorithm, clock: () => 0 });
    const slot = policy.admit(undefined).slot as LocalSlot;
    const waiting = served(policy.queue({ partition: undefined, maxWaitMs: 60_000, signal: undefined }));
    assert.throws(() => slot.release(), new Error('sample failed'));
    assert.equal(await waiting(), true);
    assert.deepEqual([policy.inFlight, algorithm.samples.length], [1, 1]);
  });

  it('rejects the limiter release with that error, the store slot released all the same', async () => {
    const adaptive = adaptiveConcurrency({
      algorithm: new StubAlgorithm(5),
      dropped: () => {
        throw new Error('dropped failed');
      },
    });
    const limiter = createLimiter({
      policy: [concurrency({ max: 1, leaseMs: 60_000 }), adaptive],
      store: new MemoryStore({ autoCleanup: false }),
      scope: 'throwing',
    });
    const held = await limiter.consume('a');
    assert.equal((await limiter.consume('a')).allowed, false);
    await assert.rejects(held.release?.({ status: 500 }) ?? Promise.resolve(), new Error('dropped failed'));
    assert.equal(adaptive.inFlight, 0);
    // The store's concurrency slot was freed despite the local release throwing first.
    assert.equal((await limiter.consume('a')).allowed, true);
  });
});

describe('adaptiveConcurrency: slots expired while the line is being served', () => {
  it('grants a waiter once, taking one slot, when serving it expires the slots that stood in its way', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { policy, clock, hold } = limited(2, { maxHoldMs: 100 });
    hold(0);
    hold(0);
    const granted: LocalAdmission[] = [];
    const waiting = policy.queue({ partition: undefined, maxWaitMs: 5000, signal: undefined });
    waiting.then((admission) => granted.push(admission));
    // The line's retry at ACTIVE_MS finds both slots past maxHoldMs: expiring them serves the line again, inside
    // the turn that is asking for this very waiter.
    clock.nowMs = 1000;
    t.mock.timers.tick(1000);
    await waiting;
    assert.equal(granted.length, 1);
    assert.equal(policy.inFlight, 1);
    assert.deepEqual(
      policy.stats().partitions.map(({ inFlight, completed, dropped }) => [inFlight, completed, dropped]),
      [[1, 2, 2]],
    );
  });
});
