// The limiter's shaping API: blockMs and block()/unblock(), refund(), decision.release(), and their refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  concurrency,
  createLimiter,
  fixedWindow,
  type Store,
  type TollgateError,
  tokenBucket,
} from '../../src/index.js';
import { lockout } from '../../src/policies/lockout.js';
import { degradedResponse, type StoreRequest } from '../../src/stores/index.js';
import { pointed } from '../harness/error-pointer.js';
import { liveKeys, manualStore, throwsConfig } from '../harness/policy-helpers.js';

const bucket = () => tokenBucket({ capacity: 2, refillPerSecond: 1 });

/** A store that records each request and answers from a MemoryStore, or with a fail mode once `down` is set. */
function recordingStore() {
  const { clock, store: inner } = manualStore();
  const requests: StoreRequest[] = [];
  /** Set to answer with a fail mode: open (true) or closed (false). */
  const state: { down: boolean; failOpen: boolean } = { down: false, failOpen: true };
  const store: Store = {
    evaluate: (request) => {
      requests.push(request);
      return state.down
        ? degradedResponse(request.policies, state.failOpen, 1000, clock.now)
        : inner.evaluate(request);
    },
    reset: (keys) => inner.reset(keys),
  };
  return { store, requests, state, clock, inner };
}

describe('createLimiter: blockMs', () => {
  it('takes a duration or 0, and refuses anything else naming the option', () => {
    const { store } = manualStore();
    for (const blockMs of [0, 1, '15m', 2 ** 51 - 1] as const)
      assert.ok(createLimiter({ policy: bucket(), store, blockMs }));
    for (const blockMs of [-1, 1.5, 'soon', 2 ** 51, null])
      throwsConfig(() => createLimiter({ policy: bucket(), store, blockMs: blockMs as never }), 'blockMs');
  });

  it("refuses a lockout passed as a policy: it is the limiter's own", () => {
    throwsConfig(() => createLimiter({ policy: [bucket(), lockout(1000)] }), 'policy');
  });

  it('keeps the lockout out of the policies it shows, and in the keys it resets', async () => {
    const { store } = manualStore();
    const limiter = createLimiter({ policy: bucket(), store, scope: 'locks', blockMs: 1000 });
    assert.deepEqual(
      limiter.policies.map((p) => p.kind),
      ['token-bucket'],
    );
    await limiter.consume('x', { cost: 2 });
    const denied = await limiter.consume('x');
    assert.deepEqual(
      denied.policies.map((p) => p.policy.kind),
      ['token-bucket'],
    );
    assert.deepEqual((await liveKeys(store)).sort(), ['{locks|x}:!lockout', '{locks|x}:token-bucket']);
    await limiter.reset('x');
    assert.deepEqual(await liveKeys(store), []);
  });
});

describe('block() and unblock()', () => {
  it('need a limiter with blockMs, and block() a duration of at least 1 ms', async () => {
    const { store } = manualStore();
    const plain = createLimiter({ policy: bucket(), store });
    await assert.rejects(plain.block('x', 1000), {
      option: 'blockMs',
      message: pointed('`blockMs` must be set for block() (0 checks blocks without starting any)'),
    });
    await assert.rejects(plain.unblock('x'), {
      option: 'blockMs',
      message: pointed('`blockMs` must be set for unblock() (0 checks blocks without starting any)'),
    });
    const locking = createLimiter({ policy: bucket(), store, blockMs: 0 });
    for (const ms of [0, -5, 'later'])
      await assert.rejects(
        locking.block('x', ms as never),
        (error: unknown) => (error as TollgateError).option === 'ms',
      );
    await assert.rejects(locking.block('x', 2 ** 51), {
      option: 'ms',
      message: pointed(`\`ms\` must be below 2^51 ms (received ${2 ** 51})`),
    });
    await locking.block('x', '1s');
    assert.equal((await locking.consume('x')).blocked, true);
  });

  it('reject when the store could not apply them (a fail mode answered)', async () => {
    const { store, state } = recordingStore();
    const limiter = createLimiter({ policy: bucket(), store, blockMs: 1000 });
    state.down = true;
    await assert.rejects(limiter.block('x', 1000), {
      code: 'ERR_TOLLGATE_STORE',
      message: pointed('the store is unreachable; the block was not applied', 'ERR_TOLLGATE_STORE'),
    });
    await assert.rejects(limiter.refund('x'), {
      code: 'ERR_TOLLGATE_STORE',
      message: pointed('the store is unreachable; the refund was not applied', 'ERR_TOLLGATE_STORE'),
    });
    state.failOpen = false;
    await assert.rejects(limiter.refund('x'), { code: 'ERR_TOLLGATE_STORE' });
    await assert.rejects(limiter.block('x', 1000), { code: 'ERR_TOLLGATE_STORE' });
  });

  it('a fail mode answer is no block', async () => {
    const { store, state } = recordingStore();
    const limiter = createLimiter({ policy: bucket(), store, blockMs: 1000 });
    state.down = true;
    assert.equal((await limiter.consume('x')).blocked, undefined);
  });
});

describe('refund()', () => {
  it("gives back the limiter's cost by default, and refuses a cost that is not a non-negative integer", async () => {
    const { store, requests } = recordingStore();
    const limiter = createLimiter({ policy: bucket(), store, cost: 2 });
    await limiter.consume('r');
    await limiter.refund('r');
    await limiter.refund('r', { cost: 0 });
    assert.deepEqual(
      requests.map(({ action, cost, lease }) => [action, cost, lease]),
      [
        ['consume', 2, ''],
        ['refund', 2, ''],
        ['refund', 0, ''],
      ],
    );
    for (const cost of [-1, 1.5, Number.NaN])
      await assert.rejects(limiter.refund('r', { cost }), { code: 'ERR_TOLLGATE_ARGUMENT' });
  });

  it('hands the store spentAtMs only when given, and refuses one that is not whole epoch ms', async () => {
    const { store, requests } = recordingStore();
    const limiter = createLimiter({ policy: bucket(), store });
    await limiter.refund('r', { spentAtMs: 1234 });
    await limiter.refund('r', { spentAtMs: 0 });
    await limiter.refund('r');
    assert.deepEqual(
      requests.map((request) => request.spentAtMs),
      [1234, 0, undefined],
    );
    assert.equal('spentAtMs' in (requests[2] as StoreRequest), false);
    for (const spentAtMs of [-1, 1.5, Number.NaN])
      await assert.rejects(limiter.refund('r', { spentAtMs }), {
        code: 'ERR_TOLLGATE_ARGUMENT',
        message: pointed(
          `\`spentAtMs\` must be a whole number of epoch ms (received ${spentAtMs})`,
          'ERR_TOLLGATE_ARGUMENT',
        ),
      });
  });

  it('named by its admission, hands the store its instant and each policy resetMs, and refuses any other', async () => {
    const { store, requests } = recordingStore();
    const policy = [bucket(), fixedWindow({ limit: 3, windowMs: 1000 })];
    const limiter = createLimiter({ policy, store, blockMs: 0 });
    await limiter.consume('r');
    const spent = await limiter.consume('r');
    const another = await createLimiter({ policy: bucket(), store }).consume('r');
    await limiter.refund('r', { spent });
    const sent = requests.at(-1) as StoreRequest;
    assert.deepEqual([sent.spentAtMs, sent.spentResetMs], [spent.nowMs, [2000, 1000]]);
    const refused = [
      [{ spent, spentAtMs: spent.nowMs }, '`spent` and `spentAtMs` cannot be combined'],
      [{ spent: { ...spent } }, 'an admission this limiter returned'],
      [{ spent: another }, 'an admission this limiter returned'],
    ] as const;
    for (const [options, message] of refused)
      await assert.rejects(limiter.refund('r', options), (error: TollgateError) => {
        assert.equal(error.code, 'ERR_TOLLGATE_ARGUMENT');
        assert.ok(error.message.includes(message), error.message);
        return true;
      });
    assert.equal(requests.at(-1), sent, 'a refused refund reaches no store');
  });

  it('named by its spend, a late refund gives a later window nothing; unnamed, the current window takes it', async () => {
    const { clock, store } = manualStore();
    const limiter = createLimiter({ policy: fixedWindow({ limit: 2, windowMs: 1000 }), store });
    const first = await limiter.consume('r');
    clock.now = 1000;
    await limiter.consume('r', { cost: 2 });
    await limiter.refund('r', { spentAtMs: first.nowMs });
    assert.equal((await limiter.peek('r', { cost: 0 })).remaining, 0);
    await limiter.refund('r');
    assert.equal((await limiter.peek('r', { cost: 0 })).remaining, 1);
  });
});

describe('decision.release()', () => {
  it('is on admissions of a limiter with a concurrency policy only, each under its own lease', async () => {
    const { store, requests } = recordingStore();
    const limiter = createLimiter({
      policy: [bucket(), concurrency({ max: 1, leaseMs: 60_000 })],
      store,
      scope: 'rel',
    });
    const first = await limiter.consume('c');
    const denied = await limiter.consume('c');
    const free = await limiter.consume('c', { cost: 0 });
    assert.equal(typeof first.release, 'function');
    assert.equal(denied.release, undefined);
    assert.equal(free.release, undefined, 'a cost of 0 takes no slot');
    const peeked = await limiter.peek('other');
    assert.deepEqual([peeked.allowed, peeked.release], [true, undefined], 'a peek takes no slot');
    assert.equal((await createLimiter({ policy: bucket(), store }).consume('c')).release, undefined);
    const [taken, second] = requests.map((r) => r.lease);
    assert.match(taken ?? '', /^[\w-]{12}\.\w+$/);
    assert.notEqual(taken, second, 'every request has its own lease');
    assert.equal(requests[2]?.lease, '');
    assert.deepEqual([requests[3]?.action, requests[3]?.lease], ['peek', ''], 'nor is a peek sent one');
  });

  it('frees the slot once: a second call answers with the same promise and asks nothing more', async () => {
    const { store, requests } = recordingStore();
    const limiter = createLimiter({ policy: concurrency({ max: 1, leaseMs: 60_000 }), store });
    const decision = await limiter.consume('c');
    const release = decision.release as () => Promise<void>;
    const once = release();
    assert.equal(release(), once);
    await once;
    const refunds = requests.filter((r) => r.action === 'refund');
    assert.deepEqual(
      refunds.map(({ cost, lease }) => [cost, lease]),
      [[0, requests[0]?.lease]],
    );
    assert.equal((await limiter.consume('c')).allowed, true);
  });

  it('is not on an admission by a fail mode, which took no slot', async () => {
    const { store, state } = recordingStore();
    const limiter = createLimiter({ policy: concurrency({ max: 1, leaseMs: 60_000 }), store });
    state.down = true;
    const decision = await limiter.consume('c');
    assert.deepEqual([decision.allowed, decision.degraded, decision.release], [true, 'fail-open', undefined]);
  });

  it('rejects when the store could not free the slot (it comes back when its lease expires)', async () => {
    const { store, state } = recordingStore();
    const limiter = createLimiter({ policy: concurrency({ max: 1, leaseMs: 60_000 }), store });
    const decision = await limiter.consume('c');
    state.down = true;
    await assert.rejects(decision.release?.() ?? Promise.resolve(), { code: 'ERR_TOLLGATE_STORE' });
  });

  it('lets a cost above the concurrency limit through wire-up: a request holds one slot whatever its cost', () => {
    assert.ok(createLimiter({ policy: concurrency({ max: 1, leaseMs: 1000 }), cost: 5 }));
    throwsConfig(
      () =>
        createLimiter({
          policy: [concurrency({ max: 9, leaseMs: 1000 }), fixedWindow({ limit: 2, windowMs: 1 })],
          cost: 3,
        }),
      'cost',
    );
  });
});
