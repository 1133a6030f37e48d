// A limiter with local policies: an adaptive limit alone, and in front of a store's policies, on every operation.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { adaptiveConcurrency } from '../../src/adaptive/adaptive-concurrency.js';
import type { Decision } from '../../src/decision/decision.js';
import { headerWriter } from '../../src/decision/headers.js';
import { createLimiter, type LimiterOptions } from '../../src/limiter/limiter.js';
import { concurrency } from '../../src/policies/concurrency.js';
import type { AnyPolicy } from '../../src/policies/policy.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { sharedMemoryStore } from '../../src/stores/memory/shared-memory-store.js';
import { ManualClock, StubAlgorithm } from '../adaptive/stub-algorithm.js';
import { pointed } from '../harness/error-pointer.js';
import { advance, countingStore, settle } from './wait-helpers.js';

const T0 = 1_000_000;

/** An adaptive limit at `limit` on a stub algorithm and a hand-moved clock, and a limiter with it. */
function guarded(limit: number, others: AnyPolicy[] = [], name?: string) {
  const algorithm = new StubAlgorithm(limit);
  const clock = new ManualClock();
  const adaptive = adaptiveConcurrency({
    algorithm,
    clock: clock.read,
    ...(name === undefined ? {} : { name }),
  });
  const counted = countingStore(new MemoryStore({ autoCleanup: false }));
  const policy = others.length === 0 ? adaptive : [...others, adaptive];
  const limiter = createLimiter({ policy, store: counted.store, scope: 'local' });
  return { adaptive, algorithm, clock, limiter, calls: counted.calls };
}

const bucket = (capacity: number, refillPerSecond = 0) => tokenBucket({ capacity, refillPerSecond });

/** The figures of each policy of a decision, by name: what headers and metrics read. */
function figures(decision: Decision) {
  return decision.policies.map(({ policy, allowed, remaining }) => [
    policy.name,
    policy.limit,
    allowed,
    remaining,
  ]);
}

describe('limiter with local policies', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 }));
  afterEach(() => mock.timers.reset());

  it('asks no store with local policies alone', async () => {
    const { adaptive, limiter, calls } = guarded(2);
    assert.deepEqual(
      { scope: limiter.scope, policies: limiter.policies, local: limiter.local },
      { scope: 'local', policies: [], local: [adaptive] },
    );
    const admitted = await limiter.consume('a');
    const { release, ...fields } = admitted;
    assert.deepEqual(fields, {
      allowed: true,
      limit: 2,
      remaining: 1,
      resetMs: 0,
      nowMs: T0,
      policies: [{ allowed: true, remaining: 1, resetMs: 0, retryAfterMs: 0, policy: adaptive.facts() }],
    });
    await limiter.consume('b');
    assert.deepEqual(await limiter.consume('c'), {
      allowed: false,
      limit: 2,
      remaining: 0,
      resetMs: 1000,
      retryAfterMs: 1000,
      nowMs: T0,
      policies: [
        { allowed: false, remaining: 0, resetMs: 1000, retryAfterMs: 1000, policy: adaptive.facts() },
      ],
      denyStatus: 503,
    });
    await release?.();
    assert.equal(adaptive.inFlight, 1);
    assert.equal(calls(), 0);
    const alone = createLimiter({ policy: adaptiveConcurrency({ name: 'guard' }) });
    assert.deepEqual([alone.scope, alone.store], ['guard', sharedMemoryStore()]);
    assert.deepEqual(figures(await limiter.peek('d')), [['adaptive-concurrency', 2, true, 0]]);
  });

  it('refuses two local policies of one name, and blockMs or block() without a store policy', async () => {
    const config = { name: 'TollgateError', code: 'ERR_TOLLGATE_CONFIG' };
    assert.throws(() => createLimiter({ policy: [adaptiveConcurrency(), adaptiveConcurrency()] }), {
      ...config,
      option: 'policy',
      message: pointed('`policy` names must be unique within a limiter (set `name`)'),
    });
    assert.throws(() => createLimiter({ policy: adaptiveConcurrency(), blockMs: 1000 }), {
      ...config,
      option: 'blockMs',
      message: pointed(
        '`blockMs` needs a policy kept in a store: local policies alone have nothing to lock out',
      ),
    });
    const { limiter } = guarded(1);
    const unblockable = {
      ...config,
      option: 'blockMs',
      message: pointed(
        '`blockMs` must be set for block() and unblock(), on a limiter with a policy kept in a store',
      ),
    };
    await assert.rejects(limiter.block('a', 1000), unblockable);
    await assert.rejects(limiter.unblock('a'), unblockable);
    assert.equal(await limiter.reset('a'), undefined);
    assert.equal(await limiter.refund('a', { cost: 1 }), undefined);
  });

  it('checks the other options of a limiter of local policies alone, naming each', () => {
    const refused = (options: Record<string, unknown>, option: string, message: string) =>
      assert.throws(() => createLimiter({ policy: adaptiveConcurrency(), ...options } as LimiterOptions), {
        name: 'TollgateError',
        code: 'ERR_TOLLGATE_CONFIG',
        option,
        message: pointed(message),
      });
    refused({ stor: 1 }, 'stor', '`stor` is not an option of createLimiter; did you mean `store`?');
    refused({ frobnicate: 1 }, 'frobnicate', '`frobnicate` is not an option of createLimiter');
    const store = '`store` must implement evaluate() and reset() (a MemoryStore or RedisStore)';
    refused({ store: {} }, 'store', store);
    refused({ store: null }, 'store', store);
    refused({ cost: 0 }, 'cost', '`cost` must be a positive integer (received 0)');
    refused({ cost: 1.5 }, 'cost', '`cost` must be a positive integer (received 1.5)');
    refused({ failOpen: 'yes' }, 'failOpen', '`failOpen` must be a boolean (received "yes")');
    const fine = { store: new MemoryStore({ autoCleanup: false }), cost: 2, failOpen: true };
    assert.equal(createLimiter({ policy: adaptiveConcurrency(), ...fine }).store, fine.store);
  });

  it('gives back the slots of the local policies before one that denies, and answers with its status', async () => {
    const wide = adaptiveConcurrency({ algorithm: new StubAlgorithm(5), name: 'wide' });
    const narrow = adaptiveConcurrency({ algorithm: new StubAlgorithm(1), name: 'narrow', status: 429 });
    const after = adaptiveConcurrency({ algorithm: new StubAlgorithm(5), name: 'after' });
    const limiter = createLimiter({ policy: [wide, narrow, after] });
    const first = await limiter.consume('a');
    assert.equal(first.allowed, true);
    const denied = await limiter.consume('a');
    assert.equal(denied.denyStatus, 429);
    assert.equal(denied.limit, 1);
    assert.deepEqual(figures(denied), [
      ['wide', 5, true, 3],
      ['narrow', 1, false, 0],
    ]);
    assert.deepEqual([wide.inFlight, after.inFlight], [1, 1]);
    assert.deepEqual((wide.algorithm as StubAlgorithm).samples, []);
    // The first request's slots complete with its release; wide's given-back slot, and after (never asked), not.
    const counts = () =>
      [wide, narrow, after].map((limit) => {
        const { completed, rejected } = limit.stats().partitions[0] ?? {};
        return [completed, rejected];
      });
    assert.deepEqual(counts(), [
      [0, 0],
      [0, 1],
      [0, 0],
    ]);
    await first.release?.();
    assert.deepEqual(counts(), [
      [1, 0],
      [1, 1],
      [1, 0],
    ]);
    assert.equal((wide.algorithm as StubAlgorithm).samples.length, 1);
  });

  it('spends nothing from the store when a local policy denies', async () => {
    const { limiter, calls } = guarded(1, [bucket(3)]);
    const first = await limiter.consume('a');
    const denied = await limiter.consume('a');
    assert.equal(calls(), 1);
    assert.equal(denied.denyStatus, 503);
    assert.deepEqual(figures(denied), [['adaptive-concurrency', 1, false, 0]]);
    await first.release?.();
    assert.deepEqual(figures(await limiter.consume('a')), [
      ['token-bucket', 3, true, 1],
      ['adaptive-concurrency', 1, true, 0],
    ]);
  });

  it('gives the local slot back, measuring nothing, when the store denies', async () => {
    const { adaptive, algorithm, limiter } = guarded(2, [bucket(1)]);
    const first = await limiter.consume('a');
    const denied = await limiter.consume('a');
    assert.equal(denied.allowed, false);
    assert.equal(denied.denyStatus, undefined);
    assert.equal(denied.release, undefined);
    assert.deepEqual(figures(denied), [
      ['token-bucket', 1, false, 0],
      ['adaptive-concurrency', 2, true, 0],
    ]);
    assert.equal(adaptive.inFlight, 1);
    assert.deepEqual(algorithm.samples, []);
    assert.deepEqual(adaptive.stats().partitions[0], {
      name: '',
      share: 0,
      inFlight: 1,
      completed: 0,
      rejected: 0,
      dropped: 0,
    });
    // Only the request that ran completes: the one the store denied never will.
    await first.release?.();
    assert.deepEqual(
      [adaptive.inFlight, adaptive.stats().partitions[0]?.completed, algorithm.samples.length],
      [0, 1, 1],
    );
  });

  it('binds an admission to whichever has fewer left, the store of equals, and its release measures', async () => {
    const { adaptive, algorithm, clock, limiter } = guarded(2, [bucket(3)]);
    clock.nowMs = 10;
    const first = await limiter.consume('a', { partition: 'any' });
    assert.deepEqual([first.limit, first.remaining, first.resetMs], [2, 1, 0]);
    clock.nowMs = 35;
    await first.release?.({ status: 504 });
    await first.release?.({ status: 200 });
    assert.deepEqual(algorithm.samples, [{ rttMs: 25, inFlight: 1, dropped: true }]);
    assert.equal(adaptive.inFlight, 0);
    assert.deepEqual(
      [adaptive.stats().partitions[0]?.completed, adaptive.stats().partitions[0]?.dropped],
      [1, 1],
    );
    // One token and one slot left: the store binds, and a bucket without refill is never at rest again.
    const second = await limiter.consume('a');
    assert.deepEqual([second.limit, second.remaining, second.resetMs], [3, 1, -1]);
  });

  it('frees a store concurrency slot and the local one on release', async () => {
    const { adaptive, algorithm, limiter } = guarded(5, [concurrency({ max: 1, leaseMs: 60_000 })]);
    const held = await limiter.consume('a');
    const denied = await limiter.consume('a');
    assert.equal(denied.allowed, false);
    assert.equal(adaptive.inFlight, 1);
    await held.release?.({ status: 200 });
    assert.equal(adaptive.inFlight, 0);
    assert.equal(algorithm.samples.length, 1);
    assert.equal((await limiter.consume('a')).allowed, true);
  });

  it('writes header fields listing the adaptive limit at its current limit, as concurrent requests', async () => {
    const { algorithm, limiter } = guarded(2, [bucket(3, 1)]);
    const write = headerWriter('draft-10', false) as NonNullable<ReturnType<typeof headerWriter>>;
    assert.deepEqual(write(await limiter.consume('a')), {
      'RateLimit-Policy': '"token-bucket";q=3;w=3, "adaptive-concurrency";q=2;qu="concurrent-requests"',
      RateLimit: '"token-bucket";r=2;t=1, "adaptive-concurrency";r=1;t=0',
    });
    algorithm.limit = 7;
    assert.deepEqual(write(await limiter.consume('a')), {
      'RateLimit-Policy': '"token-bucket";q=3;w=3, "adaptive-concurrency";q=7;qu="concurrent-requests"',
      RateLimit: '"token-bucket";r=1;t=2, "adaptive-concurrency";r=5;t=0',
    });
    algorithm.limit = 2;
    assert.deepEqual(write(await limiter.consume('a')), {
      'RateLimit-Policy': '"adaptive-concurrency";q=2;qu="concurrent-requests"',
      RateLimit: '"adaptive-concurrency";r=0;t=1',
      'Retry-After': '1',
    });
    assert.deepEqual(headerWriter('draft-6', false)?.(await limiter.consume('a')), {
      'RateLimit-Policy': '2',
      'RateLimit-Limit': '2',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '1',
      'Retry-After': '1',
    });
  });

  it('refunds the store admission named by the merged decision, once', async () => {
    const { limiter } = guarded(3, [bucket(2)]);
    const spent = await limiter.consume('a');
    await limiter.refund('a', { spent });
    // A peek tells the bucket as it would be after one more: 1 of 2 left, as before the spend.
    assert.deepEqual(figures(await limiter.peek('a'))[0], ['token-bucket', 2, true, 1]);
    assert.deepEqual(figures(await limiter.consume('a'))[0], ['token-bucket', 2, true, 1]);
    await assert.rejects(limiter.refund('a', { spent }), {
      code: 'ERR_TOLLGATE_ARGUMENT',
      message: pointed('`spent` was refunded already: a spend is given back once', 'ERR_TOLLGATE_ARGUMENT'),
    });
    await assert.rejects(limiter.refund('a', { spent: { ...spent } }), { code: 'ERR_TOLLGATE_ARGUMENT' });
  });

  it('refunds units without an admission, and resets, in the store', async () => {
    const { limiter } = guarded(10, [bucket(3)]);
    await limiter.consume('a');
    await limiter.consume('a');
    await limiter.refund('a', { cost: 1 });
    assert.deepEqual(figures(await limiter.consume('a'))[0], ['token-bucket', 3, true, 1]);
    await limiter.reset('a');
    assert.deepEqual(figures(await limiter.consume('a'))[0], ['token-bucket', 3, true, 2]);
  });

  it('gives the local slot back when the store fails', async () => {
    const adaptive = adaptiveConcurrency({ algorithm: new StubAlgorithm(3) });
    const down = {
      evaluate: async () => {
        throw new Error('down');
      },
      reset: async () => {},
    };
    const limiter = createLimiter({ policy: [bucket(1), adaptive], store: down, scope: 'down' });
    await assert.rejects(limiter.consume('a'), /down/);
    assert.equal(adaptive.inFlight, 0);
  });

  it('answers consumeSync at once, giving the local slot back when the store cannot', () => {
    const { adaptive, limiter } = guarded(1, [bucket(1)]);
    const admitted = limiter.consumeSync('a', { partition: 'p' });
    assert.equal(admitted.allowed, true);
    assert.equal(limiter.consumeSync('b').denyStatus, 503);
    void admitted.release?.();
    assert.equal(limiter.consumeSync('a').denyStatus, undefined);
    assert.equal(adaptive.inFlight, 0);
    const memory = new MemoryStore({ autoCleanup: false });
    const slow = createLimiter({
      policy: [bucket(1), adaptive],
      store: { evaluate: (request) => memory.evaluate(request), reset: (keys) => memory.reset(keys) },
    });
    assert.throws(() => slow.consumeSync('a'), { code: 'ERR_TOLLGATE_CONFIG' });
    assert.equal(adaptive.inFlight, 0);
  });

  it('peeks at every policy, taking nothing', async () => {
    const { adaptive, limiter } = guarded(1, [bucket(1)]);
    const peeked = await limiter.peek('a');
    assert.equal(peeked.allowed, true);
    assert.equal(adaptive.inFlight, 0);
    assert.equal((await limiter.consume('a')).allowed, true);
    const full = await limiter.peek('b');
    assert.deepEqual([full.allowed, full.denyStatus, full.retryAfterMs], [false, 503, 1000]);
    assert.equal(adaptive.inFlight, 1);
  });
});

describe('limiter with local policies: wait', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 }));
  afterEach(() => mock.timers.reset());

  /** Starts `wait`s in order, recording each outcome: its decision, or its error. */
  function waits(start: () => Promise<Decision>, count: number): (Decision | Error | undefined)[] {
    const settled: (Decision | Error | undefined)[] = new Array(count).fill(undefined);
    for (let i = 0; i < count; i++)
      start().then(
        (decision) => {
          settled[i] = decision;
        },
        (error: Error) => {
          settled[i] = error;
        },
      );
    return settled;
  }

  it('lines waiters up first come, first served, each served as a slot frees', async () => {
    const { adaptive, limiter } = guarded(1);
    const held = await limiter.consume('a');
    const settled = waits(() => limiter.wait('a', { maxWaitMs: 10_000 }), 2);
    await settle();
    assert.deepEqual([...settled], [undefined, undefined]);
    await held.release?.();
    await settle();
    const first = settled[0] as Decision;
    assert.deepEqual([first.allowed, settled[1]], [true, undefined]);
    assert.deepEqual(figures(first), [['adaptive-concurrency', 1, true, 0]]);
    await first.release?.();
    await settle();
    assert.equal((settled[1] as Decision).allowed, true);
    assert.equal(adaptive.inFlight, 1);
  });

  it('gives up at maxWaitMs, or when the signal aborts, holding nothing', async () => {
    const { adaptive, limiter } = guarded(1);
    await limiter.consume('a');
    const controller = new AbortController();
    const [timed, aborted] = [
      waits(() => limiter.wait('a', { maxWaitMs: 500 }), 1),
      waits(() => limiter.wait('a', { maxWaitMs: 10_000, signal: controller.signal }), 1),
    ];
    await advance(490);
    assert.deepEqual([timed[0], aborted[0]], [undefined, undefined]);
    await advance(10);
    assert.equal((timed[0] as { code?: string }).code, 'ERR_TOLLGATE_WAIT_TIMEOUT');
    controller.abort(new Error('left'));
    await settle();
    assert.deepEqual(aborted[0], new Error('left'));
    assert.equal(adaptive.inFlight, 1);
  });

  it('waits on the store first, holding no local slot meanwhile, and gives its units back if the local wait fails', async () => {
    const { adaptive, limiter, calls } = guarded(1, [bucket(1, 1)]);
    await (await limiter.consume('a')).release?.();
    const [first] = [waits(() => limiter.wait('a', { maxWaitMs: 2000 }), 1)];
    await advance(990);
    assert.deepEqual([first[0], adaptive.inFlight], [undefined, 0]);
    await advance(10);
    const admitted = first[0] as Decision;
    assert.equal(admitted.delayMs, 1000);
    assert.deepEqual(figures(admitted), [
      ['token-bucket', 1, true, 0],
      ['adaptive-concurrency', 1, true, 0],
    ]);
    // The local slot is taken: the store is asked all the same, before the local line.
    const asked = calls();
    const [late] = [waits(() => limiter.wait('a', { maxWaitMs: 1500 }), 1)];
    await settle();
    assert.equal(calls(), asked + 1);
    await advance(1490);
    assert.deepEqual([late[0], adaptive.inFlight], [undefined, 1]);
    await advance(10);
    assert.equal((late[0] as { code?: string }).code, 'ERR_TOLLGATE_WAIT_TIMEOUT');
    assert.equal(adaptive.inFlight, 1);
    await admitted.release?.();
    // The token booked for 2000 ms came back; else the next would come at 3000 ms, after this consume at 2500.
    assert.deepEqual(figures(await limiter.consume('a')), [
      ['token-bucket', 1, true, 0],
      ['adaptive-concurrency', 1, true, 0],
    ]);
  });

  it('with maxWaitMs 0, admits at once with a free slot, and with none rejects, giving the units back', async () => {
    const { adaptive, limiter } = guarded(1, [bucket(2)]);
    const [now] = [waits(() => limiter.wait('a', { maxWaitMs: 0 }), 1)];
    await settle();
    assert.deepEqual(figures(now[0] as Decision), [
      ['token-bucket', 2, true, 1],
      ['adaptive-concurrency', 1, true, 0],
    ]);
    const [none] = [waits(() => limiter.wait('a', { maxWaitMs: 0 }), 1)];
    await settle();
    mock.timers.tick(0);
    await settle();
    assert.equal((none[0] as { code?: string }).code, 'ERR_TOLLGATE_WAIT_TIMEOUT');
    await (now[0] as Decision).release?.();
    assert.equal(adaptive.inFlight, 0);
    assert.equal(figures(await limiter.consume('a'))[0]?.[3], 0);
  });

  it('gives back the slot of an earlier local line when a later one times out', async () => {
    const free = adaptiveConcurrency({ algorithm: new StubAlgorithm(2), name: 'free' });
    const full = adaptiveConcurrency({ algorithm: new StubAlgorithm(1), name: 'full' });
    full.admit(undefined);
    const limiter = createLimiter({ policy: [free, full] });
    const [outcome] = [waits(() => limiter.wait('a', { maxWaitMs: 200 }), 1)];
    await advance(190);
    assert.deepEqual([outcome[0], free.inFlight], [undefined, 1]);
    await advance(10);
    assert.equal((outcome[0] as { code?: string }).code, 'ERR_TOLLGATE_WAIT_TIMEOUT');
    assert.equal(free.inFlight, 0);
    assert.deepEqual((free.algorithm as StubAlgorithm).samples, []);
  });

  it('keeps the whole wait within maxWaitMs, the local line and the store together', {}, async () => {
    const { limiter } = guarded(1, [bucket(1, 1)]);
    const held = await limiter.consume('a');
    const [outcome] = [waits(() => limiter.wait('a', { maxWaitMs: 800 }), 1)];
    await advance(300);
    await held.release?.();
    await advance(800);
    // The bucket's next token comes at 1000 ms, past the 800 ms asked: the wait must have given up.
    assert.equal((outcome[0] as { code?: string }).code, 'ERR_TOLLGATE_WAIT_TIMEOUT');
  });
});
