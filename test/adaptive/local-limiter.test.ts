// A limiter with local policies, on the edges: operations called without options, policies beside others that deny or hold no slot, and a degraded store.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { adaptiveConcurrency } from '../../src/adaptive/adaptive-concurrency.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { fixedWindow } from '../../src/policies/fixed-window.js';
import type { LocalPolicy } from '../../src/policies/local-policy.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { degradedResponse, type Store } from '../../src/stores/index.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { advance, countingStore } from '../limiter/wait-helpers.js';
import { StubAlgorithm } from './stub-algorithm.js';

const T0 = 1_000_000;

const adaptive = (limit: number, name?: string) =>
  adaptiveConcurrency({
    algorithm: new StubAlgorithm(limit),
    clock: () => 0,
    ...(name === undefined ? {} : { name }),
  });

const bucket = (capacity: number) => tokenBucket({ capacity, refillPerSecond: 0 });

/** A local policy that admits every request without holding a slot: nothing to give back or measure. */
function slotless(): LocalPolicy {
  const result = { allowed: true, remaining: 9, resetMs: 0, retryAfterMs: 0 };
  const facts = { kind: 'slotless', name: 'slotless', limit: 10, windowMs: 0 };
  return {
    local: true,
    kind: 'slotless',
    name: 'slotless',
    limit: 10,
    denyStatus: 503,
    facts: () => facts,
    admit: () => ({ result, slot: undefined }),
    peek: () => result,
    queue: async () => ({ result, slot: undefined }),
  };
}

describe('limiter with local policies: calls without options', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 }));
  afterEach(() => mock.timers.reset());

  it('waits, refunds and answers consumeSync on local policies alone', async () => {
    const limit = adaptive(2);
    const limiter = createLimiter({ policy: limit });
    const waited = await limiter.wait('a');
    assert.equal(waited.allowed, true);
    assert.equal(limit.inFlight, 1);
    const sync = limiter.consumeSync('a');
    assert.equal(sync.allowed, true);
    assert.equal(limit.inFlight, 2);
    assert.equal(limiter.consumeSync('a').denyStatus, 503);
    assert.equal(await limiter.refund('a'), undefined);
    await waited.release?.();
    await sync.release?.();
    assert.equal(limit.inFlight, 0);
  });

  it('waits without options on the store, then the local line', async () => {
    const limit = adaptive(1);
    const limiter = createLimiter({
      policy: [bucket(2), limit],
      store: new MemoryStore({ autoCleanup: false }),
    });
    const waited = await limiter.wait('a');
    assert.equal(waited.allowed, true);
    assert.equal(waited.remaining, 0);
    assert.equal(limit.inFlight, 1);
    await waited.release?.();
  });

  it("gives a failed wait's units back to the window that admitted them, not a later one", async () => {
    const store = new MemoryStore({ autoCleanup: false });
    const window = () => fixedWindow({ limit: 2, windowMs: 1000 });
    const limit = adaptive(1);
    limit.admit(undefined);
    const limiter = createLimiter({ policy: [window(), limit], store, scope: 'w' });
    const plain = createLimiter({ policy: window(), store, scope: 'w' });
    const waiting = limiter.wait('a', { maxWaitMs: 1500 });
    const failed = assert.rejects(waiting, { code: 'ERR_TOLLGATE_WAIT_TIMEOUT' });
    await advance(1200);
    assert.equal((await plain.consume('a')).remaining, 1);
    await advance(300);
    await failed;
    // The unit the wait took in the first window is not given to the second, which keeps the one spent in it.
    assert.equal((await plain.consume('a')).remaining, 0);
  });

  it('takes blockMs beside a store policy: only a limiter of local policies alone refuses it', async () => {
    const limit = adaptive(1);
    const limiter = createLimiter({ policy: [bucket(2), limit], blockMs: 1000 });
    assert.equal((await limiter.consume('a')).allowed, true);
  });
});

describe('limiter with local policies: beside others', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 }));
  afterEach(() => mock.timers.reset());

  it('asks no store when a later local policy denies, though an earlier one admitted', async () => {
    const wide = adaptive(5, 'wide');
    const full = adaptive(1, 'full');
    full.admit(undefined);
    const counted = countingStore(new MemoryStore({ autoCleanup: false }));
    const limiter = createLimiter({ policy: [bucket(3), wide, full], store: counted.store });
    const denied = await limiter.consume('a');
    assert.equal(denied.allowed, false);
    assert.equal(counted.calls(), 0);
    assert.equal(limiter.consumeSync('a').allowed, false);
    assert.equal(counted.calls(), 0);
    assert.equal(wide.inFlight, 0);
  });

  it('gives a peek no release, and an admission a release even beside a policy that holds no slot', async () => {
    const limit = adaptive(2);
    const limiter = createLimiter({ policy: [slotless(), limit] });
    const peeked = await limiter.peek('a');
    assert.equal(peeked.allowed, true);
    assert.equal(peeked.release, undefined);
    const admitted = await limiter.consume('a');
    assert.equal(limit.inFlight, 1);
    await admitted.release?.({ status: 200 });
    assert.equal(limit.inFlight, 0);
    assert.equal((limit.algorithm as StubAlgorithm).samples.length, 1);
    const alone = createLimiter({ policy: slotless(), scope: 'alone' });
    assert.equal((await alone.consume('a')).release, undefined);
  });

  it('tells a degraded store decision through the merged one', async () => {
    const limit = adaptive(2);
    // What RedisStore answers when it cannot reach Redis.
    const down: Store = {
      evaluate: async (request) => degradedResponse(request.policies, request.failOpen ?? false, 2500, T0),
      reset: async () => {},
    };
    const limiter = createLimiter({ policy: [bucket(1), limit], store: down, failOpen: true });
    const admitted = await limiter.consume('a');
    assert.equal(admitted.allowed, true);
    assert.equal(admitted.degraded, 'fail-open');
    await admitted.release?.();
    const healthy = await createLimiter({ policy: [bucket(1), adaptive(1)], scope: 'up' }).consume('a');
    assert.equal('degraded' in healthy, false);
  });
});
