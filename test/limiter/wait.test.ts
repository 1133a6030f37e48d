// limiter.wait() on mocked timers and clock: the rate it admits at, first come first served, early timeouts, aborts.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import {
  type AnyPolicy,
  concurrency,
  createLimiter,
  type Decision,
  fixedWindow,
  MemoryStore,
  type Store,
  TollgateError,
  tokenBucket,
} from '../../src/index.js';
import { pointed } from '../harness/error-pointer.js';
import { advance, countingStore, settle } from './wait-helpers.js';

/** Starts waits in order and records, for each, the mocked instant it resolved at (or its error). */
function waiters(run: () => Promise<Decision>, count: number) {
  const settled: (number | Error)[] = new Array(count);
  const started = Date.now();
  for (let i = 0; i < count; i++)
    run().then(
      () => {
        settled[i] = Date.now() - started;
      },
      (error: Error) => {
        settled[i] = error;
      },
    );
  return settled;
}

const limiterOf = (policy: AnyPolicy | AnyPolicy[], store: Store = new MemoryStore({ autoCleanup: false })) =>
  createLimiter({ policy, store, scope: 'wait' });

describe('limiter.wait', () => {
  // Inside the suite, so that they touch no other file's tests where several share a process (mutation testing).
  // setTimeout and Date are mocked: the MemoryStore reads Date.now, and wait sleeps on setTimeout.
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('admits a token bucket at its rate, first come first served, each booked with one store call', async () => {
    const { store, calls } = countingStore();
    const limiter = limiterOf(tokenBucket({ capacity: 1, refillPerSecond: 10 }), store);
    const settled = waiters(() => limiter.wait('api'), 5);
    await advance(500);
    assert.deepEqual(settled, [0, 100, 200, 300, 400]);
    assert.equal(calls(), 5, 'no polling: each waiter is booked by its first call');
  });

  it('asks a window again only at its retry time, one caller at a time, in order', async () => {
    const { store, calls } = countingStore();
    const limiter = limiterOf(fixedWindow({ limit: 2, windowMs: 1000 }), store);
    const settled = waiters(() => limiter.wait('api'), 5);
    await advance(2000);
    assert.deepEqual(settled, [0, 0, 1000, 1000, 2000]);
    // Only the first in line asks: each window's first caller is denied once, then each admitted once.
    assert.equal(calls(), 5 + 2);
  });

  it('rejects at once when the request cannot pass within maxWaitMs, or ever', async () => {
    const limiter = limiterOf(tokenBucket({ capacity: 2, refillPerSecond: 1 }));
    await limiter.consume('api', { cost: 2 });
    const booked = limiter.wait('api', { maxWaitMs: 1500 });
    const late = limiter.wait('api', { maxWaitMs: 1500 });
    await assert.rejects(late, (error: unknown) => {
      assert.ok(error instanceof TollgateError);
      assert.equal(error.code, 'ERR_TOLLGATE_WAIT_TIMEOUT');
      assert.match(error.message, /within `maxWaitMs` \(1500 ms\): the earliest it could pass is in 2000 ms/);
      return true;
    });
    await assert.rejects(limiter.wait('api', { cost: 3 }), /it can never pass at this cost/);
    await advance(1000);
    assert.equal((await booked).allowed, true);
  });

  it('rejects a window wait as soon as its retry time is beyond the deadline, with no store call after', async () => {
    const { store, calls } = countingStore();
    const limiter = limiterOf(fixedWindow({ limit: 1, windowMs: 10_000 }), store);
    await limiter.consume('api');
    await assert.rejects(limiter.wait('api', { maxWaitMs: 9999 }), { code: 'ERR_TOLLGATE_WAIT_TIMEOUT' });
    assert.equal(calls(), 2);
    const admitted = limiter.wait('api', { maxWaitMs: 10_000 });
    await advance(10_000);
    assert.equal((await admitted).allowed, true);
  });

  it('rejects with the abort reason at once: before asking, while sleeping, and while booked', async () => {
    const limiter = limiterOf(fixedWindow({ limit: 1, windowMs: 10_000 }));
    const aborted = AbortSignal.abort(new Error('gone'));
    await assert.rejects(limiter.wait('never-asked', { signal: aborted }), /gone/);
    assert.equal((await limiter.peek('never-asked')).remaining, 0, 'nothing was spent');
    await limiter.consume('api');
    const controller = new AbortController();
    const sleeping = limiter.wait('api', { signal: controller.signal });
    await settle();
    controller.abort(new Error('stop'));
    await assert.rejects(sleeping, /stop/);

    const bucket = limiterOf(tokenBucket({ capacity: 1, refillPerSecond: 1 }));
    await bucket.consume('b');
    const booking = new AbortController();
    const booked = bucket.wait('b', { signal: booking.signal });
    await settle();
    booking.abort(new Error('left the line'));
    await assert.rejects(booked, /left the line/);
    assert.equal((await bucket.consume('b')).allowed, false, 'a booked place stays spent');
  });

  it('gives back an admission the caller abandoned while it was being decided', async () => {
    const controller = new AbortController();
    const inner = new MemoryStore({ autoCleanup: false });
    const refunds: unknown[] = [];
    let spent: unknown;
    const store: Store = {
      evaluate: (request) => {
        const response = inner.evaluate(request);
        if (request.action === 'consume') {
          spent = [response.nowMs, response.results.map((r) => r.resetMs)];
          controller.abort(new Error('changed my mind'));
        }
        if (request.action === 'refund' && request.cost > 0)
          refunds.push([request.spentAtMs, request.spentResetMs]);
        return response;
      },
      reset: (keys) => inner.reset(keys),
    };
    const limiter = limiterOf(
      [tokenBucket({ capacity: 2, refillPerSecond: 1 }), concurrency({ max: 1, leaseMs: 60_000 })],
      store,
    );
    await assert.rejects(limiter.wait('api', { signal: controller.signal }), /changed my mind/);
    const view = await limiter.peek('api', { cost: 0 });
    assert.deepEqual(
      view.policies.map((p) => p.remaining),
      [2, 1],
      'its token and its slot came back',
    );
    assert.deepEqual(refunds, [spent], 'given back as its decision spent it');
  });

  it('on a concurrency limit, wakes when a slot is released in this process', async () => {
    const limiter = limiterOf(concurrency({ max: 1, leaseMs: 60_000 }));
    const holder = await limiter.consume('api');
    const waited: Decision[] = [];
    void limiter.wait('api').then((decision) => waited.push(decision));
    await settle();
    assert.equal(waited.length, 0);
    await holder.release?.();
    await settle();
    assert.equal(waited[0]?.allowed, true, 'admitted without waiting for the lease to expire');
    assert.equal(typeof waited[0]?.release, 'function');
  });

  it('refuses a maxWaitMs that is not a non-negative integer; 0 means now or not at all', async () => {
    const limiter = limiterOf(fixedWindow({ limit: 1, windowMs: 1000 }));
    for (const maxWaitMs of [-1, 1.5, Number.NaN, 2 ** 51])
      await assert.rejects(limiter.wait('api', { maxWaitMs }), {
        code: 'ERR_TOLLGATE_ARGUMENT',
        message: pointed(
          `\`maxWaitMs\` must be a non-negative integer below 2^51 (received ${maxWaitMs})`,
          'ERR_TOLLGATE_ARGUMENT',
        ),
      });
    assert.equal((await limiter.wait('api', { maxWaitMs: 0 })).allowed, true);
    await assert.rejects(limiter.wait('api', { maxWaitMs: 0 }), { code: 'ERR_TOLLGATE_WAIT_TIMEOUT' });
  });

  it('waits without a deadline for up to the longest timer (about 24.8 days) by default', async () => {
    const limiter = limiterOf(fixedWindow({ limit: 1, windowMs: '30d' }));
    await limiter.consume('api');
    await assert.rejects(limiter.wait('api'), {
      message: pointed(
        'the request cannot pass within `maxWaitMs` (2147483647 ms): the earliest it could pass is in 2592000000 ms',
        'ERR_TOLLGATE_WAIT_TIMEOUT',
      ),
    });
  });

  it('rejects at once when the signal aborted while the store was deciding a denial', async () => {
    const controller = new AbortController();
    const inner = new MemoryStore({ autoCleanup: false });
    let armed = false;
    const store: Store = {
      evaluate: (request) => {
        if (armed) controller.abort(new Error('gave up'));
        return inner.evaluate(request);
      },
      reset: (keys) => inner.reset(keys),
    };
    const limiter = limiterOf(fixedWindow({ limit: 1, windowMs: 1000 }), store);
    await limiter.consume('api');
    armed = true;
    const outcome: unknown[] = [];
    limiter.wait('api', { signal: controller.signal, maxWaitMs: 5000 }).catch((error) => outcome.push(error));
    await settle();
    assert.match(String(outcome[0]), /gave up/, 'rejected without any time passing');
  });

  it('wakes every waiter of an identifier as slots are released here', async () => {
    const limiter = limiterOf(concurrency({ max: 2, leaseMs: 60_000 }));
    const holders = [await limiter.consume('api'), await limiter.consume('api')];
    const admitted: Decision[] = [];
    for (let i = 0; i < 2; i++) void limiter.wait('api').then((decision) => admitted.push(decision));
    await settle();
    for (const holder of holders) await holder.release?.();
    await settle();
    assert.equal(admitted.length, 2, 'both admitted without waiting for a lease to expire');
  });
});
