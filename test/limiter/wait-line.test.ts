// limiter.wait() in line: concurrency waits that last until a slot frees, one store call per admission or so for a
// thousand waiters, no caller overtaken, deadlines known early, and sleeps past the longest Node timer.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import {
  type ConcurrencyOptions,
  concurrency,
  createLimiter,
  type Decision,
  fixedWindow,
  type Limiter,
  MemoryStore,
  type Store,
  tokenBucket,
} from '../../src/index.js';
import { WaitLine } from '../../src/limiter/wait-line.js';
import { advance, countingStore, settle } from './wait-helpers.js';

/** Two limiters of one scope on one store: what two processes sharing a store are to each other. */
function twoInstances(policy: () => Parameters<typeof createLimiter>[0]['policy'], store: Store) {
  const make = () => createLimiter({ policy: policy(), store, scope: 'line' });
  return [make(), make()] as const;
}

describe('limiter.wait in line', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('on a concurrency limit, waits for a slot however long the lease, within maxWaitMs', async () => {
    const { store } = countingStore();
    const [here, elsewhere] = twoInstances(() => concurrency({ max: 1, leaseMs: 30_000 }), store);
    const holder = await elsewhere.consume('api');
    const admitted: number[] = [];
    const started = Date.now();
    void here.wait('api', { maxWaitMs: 1000 }).then(() => admitted.push(Date.now() - started));
    await advance(300);
    assert.deepEqual(admitted, [], 'still waiting, not refused for a lease of 30 s');
    await holder.release?.();
    await advance(200);
    const [at] = admitted;
    assert.ok(at !== undefined && at <= 300 + 100, `taken ${at} ms after the start`);
  });

  it('on a concurrency limit, gives up when no slot frees within maxWaitMs', async () => {
    const [limiter] = twoInstances(() => concurrency({ max: 1, leaseMs: 30_000 }), new MemoryStore());
    await limiter.consume('api');
    const outcome: unknown[] = [];
    limiter.wait('api', { maxWaitMs: 1000 }).catch((error) => outcome.push(error));
    await advance(990);
    assert.deepEqual(outcome, []);
    await advance(20);
    assert.match(String(outcome[0]), /within `maxWaitMs` \(1000 ms\): no slot was released in time/);
  });

  it('a wait that gives up starts no lockout, even asking at its deadline or with maxWaitMs 0', async () => {
    const store = new MemoryStore({ autoCleanup: false });
    const slots = createLimiter({ policy: concurrency({ max: 1, leaseMs: 60_000 }), store, blockMs: 60_000 });
    const holder = await slots.consume('api');
    const outcome: unknown[] = [];
    slots.wait('api', { maxWaitMs: 150 }).catch((error) => outcome.push(error));
    await advance(200);
    assert.match(String(outcome[0]), /no slot was released in time/);
    await holder.release?.();
    const after = await slots.consume('api');
    assert.deepEqual([after.allowed, after.blocked], [true, undefined], 'not locked out by the wait');
    const window = createLimiter({
      policy: fixedWindow({ limit: 1, windowMs: 1000 }),
      store,
      blockMs: 60_000,
    });
    await window.consume('api');
    await assert.rejects(window.wait('api', { maxWaitMs: 0 }), { code: 'ERR_TOLLGATE_WAIT_TIMEOUT' });
    await advance(1000);
    assert.equal((await window.consume('api')).allowed, true, 'the next window, no lockout');
  });

  it('waits out a block, and gives up at once when the block outlasts maxWaitMs', async () => {
    const limiter = createLimiter({
      policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }),
      store: new MemoryStore({ autoCleanup: false }),
      blockMs: 0,
    });
    await limiter.block('api', 1000);
    await assert.rejects(limiter.wait('api', { maxWaitMs: 500 }), /the earliest it could pass is in 1000 ms/);
    let admittedAt: number | undefined;
    const started = Date.now();
    void limiter.wait('api', { maxWaitMs: 5000 }).then(() => {
      admittedAt = Date.now() - started;
    });
    await advance(1100);
    assert.equal(admittedAt, 1000);
  });

  // Beside a token bucket too: a limiter lines up when any of its policies cannot be booked ahead.
  for (const [name, policy] of [
    ['a window', fixedWindow({ limit: 3, windowMs: 1000 })],
    [
      'a window beside a token bucket',
      [tokenBucket({ capacity: 100, refillPerSecond: 100 }), fixedWindow({ limit: 3, windowMs: 1000 })],
    ],
  ] as const) {
    it(`a later caller does not overtake one waiting for more room: ${name}`, async () => {
      const limiter = createLimiter({ policy, store: new MemoryStore({ autoCleanup: false }) });
      await limiter.consume('api', { cost: 2 });
      const order: string[] = [];
      const big = limiter.wait('api', { cost: 3 }).then(() => order.push('cost 3, first'));
      await settle();
      const small = limiter.wait('api', { cost: 1 }).then(() => order.push('cost 1, later'));
      // The first takes the next window whole; the later one, the one after.
      await advance(2000);
      await Promise.all([big, small]);
      assert.deepEqual(order, ['cost 3, first', 'cost 1, later']);
    });
  }

  it('a caller behind the first whose deadline is the earliest instant is not turned away: it may pass then', async () => {
    const limiter = createLimiter({
      policy: fixedWindow({ limit: 1, windowMs: 10_000 }),
      store: new MemoryStore(),
    });
    await limiter.consume('api');
    const outcomes: string[] = [];
    void limiter.wait('api').then(() => outcomes.push('first'));
    limiter.wait('api', { maxWaitMs: 10_000 }).catch((error: Error) => outcomes.push(error.message));
    limiter.wait('api', { maxWaitMs: 9_999 }).catch((error: Error) => outcomes.push(error.message));
    await settle();
    assert.equal(outcomes.length, 1, 'only the one whose deadline comes sooner gave up');
    assert.match(outcomes[0] as string, /\(9999 ms\): the earliest it could pass is in 10000 ms/);
  });

  it('a thousand waiters: about two store calls per admission, each admitted in the order it came', async () => {
    const { store, calls } = countingStore();
    const limiter = createLimiter({ policy: concurrency({ max: 2, leaseMs: 60_000 }), store });
    const order: number[] = [];
    const work = (decision: Decision, i: number) => {
      order.push(i);
      setTimeout(() => void decision.release?.(), 30);
    };
    const waits = Array.from({ length: 1000 }, (_, i) => limiter.wait('api').then((d) => work(d, i)));
    await advance(1000 * 15 + 100);
    await Promise.all(waits);
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
      'nobody overtaken',
    );
    // Store calls of the waits alone: each release is one more.
    const perAdmission = (calls() - 1000) / 1000;
    assert.ok(perAdmission <= 3, `${perAdmission} store calls per admission`);
  });

  it('a window admits its waiters in the order they came, however many are denied on the way', async () => {
    const limiter = createLimiter({
      policy: fixedWindow({ limit: 3, windowMs: 1000 }),
      store: new MemoryStore(),
    });
    const order: number[] = [];
    const waits = Array.from({ length: 30 }, (_, i) => limiter.wait('api').then(() => order.push(i)));
    await advance(10_000, 50);
    await Promise.all(waits);
    assert.deepEqual(
      order,
      Array.from({ length: 30 }, (_, i) => i),
    );
  });

  it('a caller in line gives up at once when the first learns nobody passes before its deadline', async () => {
    const { store, calls } = countingStore();
    const limiter = createLimiter({ policy: fixedWindow({ limit: 1, windowMs: 10_000 }), store });
    await limiter.consume('api');
    const outcomes: unknown[] = [];
    void limiter.wait('api').then(() => outcomes.push('first'));
    limiter.wait('api', { maxWaitMs: 5000 }).catch((error) => outcomes.push(error));
    await settle();
    assert.match(String(outcomes[0]), /the earliest it could pass is in 10000 ms/);
    assert.equal(calls(), 2, 'the one in line never asked');
  });

  it('a caller in line gives up at its deadline, and on an abort, without asking', async () => {
    const { store, calls } = countingStore();
    const limiter = createLimiter({ policy: concurrency({ max: 1, leaseMs: 60_000 }), store });
    await limiter.consume('api');
    const outcomes: unknown[] = [];
    void limiter.wait('api').catch(() => undefined);
    limiter.wait('api', { maxWaitMs: 250 }).catch((error) => outcomes.push(error));
    const controller = new AbortController();
    limiter.wait('api', { signal: controller.signal }).catch((error) => outcomes.push(error));
    await settle();
    const asked = calls();
    controller.abort(new Error('left the line'));
    await advance(260);
    assert.match(String(outcomes[0]), /left the line/);
    assert.match(String(outcomes[1]), /earlier callers were still waiting/);
    assert.equal(calls() - asked, 2, 'only the first in line asked again (its polls at 100 and 200 ms)');
  });

  it('a concurrency denial advises a short retry, not the lease; the lease when it ends sooner', async () => {
    const store = new MemoryStore();
    const advised = async (limiter: Limiter) => {
      await limiter.consume('api');
      return (await limiter.consume('api')).retryAfterMs;
    };
    const lease = (options: Pick<ConcurrencyOptions, 'leaseMs' | 'retryAfterMs'>) =>
      createLimiter({ policy: concurrency({ max: 1, ...options }), store });
    assert.equal(await advised(lease({ leaseMs: 120_000 })), 1000);
    assert.equal(await advised(lease({ leaseMs: 120_000, retryAfterMs: '5s' })), 5000);
    assert.equal(await advised(lease({ leaseMs: 400 })), 400);
  });

  it('sleeps to a booked instant beyond the longest Node timer (24.8 days)', async () => {
    const day = 86_400_000;
    const limiter = createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 1 / (30 * 86_400) }),
      store: new MemoryStore(),
    });
    await limiter.consume('api');
    let admittedAt: number | undefined;
    const started = Date.now();
    void limiter.wait('api', { maxWaitMs: 40 * day }).then(() => {
      admittedAt = Date.now() - started;
    });
    await settle();
    const longestTimer = 2 ** 31 - 1;
    mock.timers.tick(longestTimer);
    await settle();
    assert.equal(admittedAt, undefined, 'not woken when the first timer, of 24.8 days, fired');
    mock.timers.tick(30 * day - longestTimer - 1);
    await settle();
    assert.equal(admittedAt, undefined);
    mock.timers.tick(1);
    await settle();
    assert.equal(admittedAt, 30 * day, 'woken at the booked instant');
  });
});

describe('WaitLine', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  /** The first in line of `identifier`'s line, and a way to tell whether its nap has ended. */
  async function firstInLine(line: WaitLine, identifier: string) {
    const place = line.join(identifier);
    await place.turn(Date.now() + 60_000, 60_000, undefined);
    const nap = (ms: number) => {
      const ended = { done: false };
      const promise = place.nap(ms, undefined).then(() => {
        ended.done = true;
      });
      return { ended, promise };
    };
    return { place, nap };
  }

  it('a release while the first is asking ends its next nap at once; one before its ask does not', async () => {
    const line = new WaitLine();
    const { place, nap } = await firstInLine(line, 'a');
    place.asking();
    line.released('a');
    const woken = nap(100);
    await settle();
    assert.equal(woken.ended.done, true, 'the release came after the ask began: ask again at once');
    line.released('a');
    place.asking();
    const idle = nap(100);
    await settle();
    assert.equal(idle.ended.done, false, 'the ask after it saw the release already');
    mock.timers.tick(100);
    await idle.promise;
  });

  it('a release during a nap ends it; after a nap that ran out, the next release is not lost', async () => {
    const line = new WaitLine();
    const { place, nap } = await firstInLine(line, 'a');
    const first = nap(100);
    await settle();
    line.released('a');
    await first.promise;
    const second = nap(100);
    mock.timers.tick(100);
    await second.promise;
    place.asking();
    line.released('a');
    const third = nap(100);
    await settle();
    assert.equal(third.ended.done, true);
  });

  it('forgets a line once its last caller leaves, also one that never got in (its signal had aborted)', async () => {
    const line = new WaitLine();
    const aborted = AbortSignal.abort(new Error('gone'));
    for (const identifier of ['a', 'b', 'c']) {
      const place = line.join(identifier);
      await assert.rejects(place.turn(Date.now() + 1000, 1000, aborted), /gone/);
      place.leave();
    }
    assert.equal(line.size, 0);
    const first = line.join('a');
    await first.turn(Date.now() + 1000, 1000, undefined);
    const second = line.join('a');
    const queued = second.turn(Date.now() + 1000, 1000, undefined);
    first.leave();
    await queued;
    assert.equal(line.size, 1, 'the second is first now');
    second.leave();
    first.leave();
    assert.equal(line.size, 0);
  });
});
