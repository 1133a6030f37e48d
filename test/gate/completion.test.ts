// The gate's end of a request: which outcomes carry `complete`, what it refunds and from where, a client that left
// first, and its failures.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { TollgateError } from '../../src/core/errors.js';
import { createGate } from '../../src/gate/gate.js';
import type { GateOptions } from '../../src/gate/options.js';
import { createLimiter, type Limiter } from '../../src/limiter/limiter.js';
import { concurrency } from '../../src/policies/concurrency.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { degradedResponse, type Store } from '../../src/stores/store.js';
import { silentLogger, unitsLeft } from '../../src/testing/adapter-contract.js';

const T0 = Date.UTC(2030, 0, 1);
const CLIENT = '10.0.0.1';

function bucket(scope: string, capacity = 3) {
  const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
  return createLimiter({ scope, policy: tokenBucket({ capacity, refillPerSecond: 1 }), store });
}

/** A gate whose "framework" request is the client address itself, and whose response is a status. */
function gateFor(options: GateOptions<string, number>) {
  return createGate<string, number>(
    { logger: silentLogger(), ...options },
    { name: 'test', identifier: (ip) => ip },
  );
}

/** Lets the background release and refund a `complete` started run out. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

function configErrorOn(option: string, message?: RegExp) {
  return (error: unknown) =>
    error instanceof TollgateError &&
    error.code === 'ERR_TOLLGATE_CONFIG' &&
    error.option === option &&
    (message === undefined || message.test(error.message));
}

describe('refund options at wire-up', () => {
  it('refuses non-boolean skip options and a non-function requestWasSuccessful, naming the option', () => {
    const limiter = bucket('wire');
    assert.throws(
      () => gateFor({ limiter, skipFailedRequests: 'yes' as never }),
      configErrorOn('skipFailedRequests'),
    );
    assert.throws(
      () => gateFor({ limiter, skipSuccessfulRequests: 1 as never }),
      configErrorOn('skipSuccessfulRequests', /must be a boolean/),
    );
    assert.throws(
      () => gateFor({ limiter, skipFailedRequests: true, requestWasSuccessful: 'ok' as never }),
      configErrorOn('requestWasSuccessful', /must be a function/),
    );
  });

  it('refuses both skip options together: they would refund every request', () => {
    assert.throws(
      () => gateFor({ limiter: bucket('both'), skipFailedRequests: true, skipSuccessfulRequests: true }),
      configErrorOn('skipSuccessfulRequests', /concurrency\(\)/),
    );
  });

  it('refuses abortedRequestsFail that is not a boolean, or without skipFailedRequests, whose refunds it changes', () => {
    const limiter = bucket('aborts');
    assert.throws(
      () => gateFor({ limiter, skipFailedRequests: true, abortedRequestsFail: 'yes' as never }),
      configErrorOn('abortedRequestsFail', /must be a boolean/),
    );
    for (const others of [{}, { skipSuccessfulRequests: true }])
      assert.throws(
        () => gateFor({ limiter, ...others, abortedRequestsFail: true }),
        configErrorOn('abortedRequestsFail', /skipFailedRequests/),
      );
    assert.doesNotThrow(() => gateFor({ limiter, skipFailedRequests: true, abortedRequestsFail: false }));
  });

  it('refuses requestWasSuccessful without a skip option, which it would serve', () => {
    assert.throws(
      () => gateFor({ limiter: bucket('alone'), requestWasSuccessful: () => true }),
      configErrorOn('requestWasSuccessful', /skipFailedRequests/),
    );
  });

  it('takes blockMs as an option that builds the limiter: not beside `limiter`, and checked like createLimiter', () => {
    assert.throws(() => gateFor({ limiter: bucket('block'), blockMs: '15m' }), configErrorOn('blockMs'));
    assert.throws(
      () => gateFor({ requestsPerMinute: 5, blockMs: 'soon' as never }),
      configErrorOn('blockMs'),
    );
  });
});

describe('complete', () => {
  it('comes only with an admission that holds something: a slot, or a refund to decide', async () => {
    const plain = gateFor({ limiter: bucket('plain') });
    const refunding = gateFor({ limiter: bucket('refunding', 1), skipFailedRequests: true });
    const slots = gateFor({ policy: concurrency({ max: 1, leaseMs: '1m' }), scope: 'slots' });
    const skipped = gateFor({ limiter: bucket('skipped'), skipFailedRequests: true, skip: () => true });
    const completes = async (gate: ReturnType<typeof gateFor>) => {
      const outcome = await gate.check(CLIENT);
      return outcome.action === 'next' ? typeof outcome.complete : outcome.action;
    };
    assert.equal(await completes(plain), 'undefined');
    assert.equal(await completes(refunding), 'function');
    assert.equal(await completes(refunding), 'reject');
    assert.equal(await completes(slots), 'function');
    assert.equal(await completes(slots), 'reject');
    assert.equal(await completes(skipped), 'undefined');
  });

  it('holds nothing for a decision the fail mode made: the store recorded nothing to give back', async () => {
    const unreachable: Store = {
      evaluate: (request) => degradedResponse(request.policies, true, 1000, T0),
      reset: () => {},
    };
    const gate = gateFor({
      policy: concurrency({ max: 1, leaseMs: '1m' }),
      store: unreachable,
      skipFailedRequests: true,
    });
    const outcome = await gate.check(CLIENT);
    assert.equal(outcome.action, 'next');
    assert.equal(outcome.action === 'next' && outcome.complete, undefined);
  });

  it("refunds the tier's limiter that decided, with the request's identity and cost, on the first call only", async () => {
    const base = bucket('base', 5);
    const paid = bucket('paid', 5);
    const gate = gateFor({
      limiter: base,
      cost: 2,
      skipFailedRequests: true,
      tiers: { resolve: () => 'paid', limiters: { paid } },
    });
    const outcome = await gate.check(CLIENT);
    assert.ok(outcome.action === 'next' && outcome.complete !== undefined);
    assert.equal(await unitsLeft(paid, CLIENT), 3);
    outcome.complete(500, 500);
    outcome.complete(undefined, 500);
    await settle();
    assert.equal(await unitsLeft(paid, CLIENT), 5);
    // A refund never fills a bucket past full, so a second one shows only below it: two requests in, one back.
    await gate.check(CLIENT);
    const third = await gate.check(CLIENT);
    assert.ok(third.action === 'next' && third.complete !== undefined);
    third.complete(503, 503);
    third.complete(503, 503);
    await settle();
    assert.equal(await unitsLeft(paid, CLIENT), 3);
    assert.equal(await unitsLeft(base, CLIENT), 5);
  });

  it('passes the request and the response to requestWasSuccessful, and skips it for a client that left', async () => {
    const requestWasSuccessful = mock.fn((_req: string, res: number) => res === 201);
    const limiter = bucket('verdict');
    const gate = gateFor({ limiter, skipSuccessfulRequests: true, requestWasSuccessful });
    for (const [status, res, left] of [
      [200, 201, false],
      [200, 200, false],
      [undefined, 201, true],
    ] as const) {
      const outcome = await gate.check(CLIENT);
      assert.ok(outcome.action === 'next' && outcome.complete !== undefined);
      if (left) outcome.complete.left(res);
      outcome.complete(status, res);
    }
    await settle();
    assert.deepEqual(
      requestWasSuccessful.mock.calls.map((call) => call.arguments),
      [
        [CLIENT, 201],
        [CLIENT, 200],
      ],
    );
    assert.equal(await unitsLeft(limiter, CLIENT), 1);
  });

  it('logs a failed release or refund and never throws or leaves a rejection unhandled, whatever the logger does', async (t) => {
    const unhandled = mock.fn();
    process.on('unhandledRejection', unhandled);
    t.after(() => process.off('unhandledRejection', unhandled));
    const memory = new MemoryStore({ clock: () => T0, autoCleanup: false });
    // Up for decisions, down for everything given back.
    const store: Store = {
      evaluate: (request) =>
        request.action === 'refund'
          ? degradedResponse(request.policies, true, 1000, T0)
          : memory.evaluate(request),
      reset: (keys) => memory.reset(keys),
    };
    const policy = [tokenBucket({ capacity: 3, refillPerSecond: 1 }), concurrency({ max: 3, leaseMs: '1m' })];
    for (const logger of [
      silentLogger(),
      { warn: () => {}, error: mock.fn(() => assert.fail('logger down')) },
    ]) {
      const gate = gateFor({ policy, store, scope: 'down', skipFailedRequests: true, logger });
      const outcome = await gate.check(CLIENT);
      assert.ok(outcome.action === 'next' && outcome.complete !== undefined);
      outcome.complete(500, 500);
      await settle();
      const messages = logger.error.mock.calls.map((call) => String(call.arguments[1]));
      assert.deepEqual(messages.sort(), [
        '[tollgate] refunding the request failed; it stays counted',
        '[tollgate] releasing the concurrency slot failed; it frees when its lease expires',
      ]);
    }
    assert.equal(unhandled.mock.callCount(), 0);
  });
});

describe('a client that left before its response', () => {
  /** A bucket and a slot, on a store of its own. */
  const slotAndBucket = () =>
    createLimiter({
      scope: 'left',
      policy: [tokenBucket({ capacity: 3, refillPerSecond: 1 }), concurrency({ max: 1, leaseMs: '1m' })],
      store: new MemoryStore({ clock: () => T0, autoCleanup: false }),
    });
  /** Slots held and units left: the slot's remaining is 0 while the admission holds it. */
  const held = async (limiter: Limiter) => {
    const { policies } = await limiter.peek(CLIENT, { cost: 0 });
    return policies.map((policy) => policy.remaining);
  };

  for (const [what, options, refunded] of [
    ['skipFailedRequests counts it', { skipFailedRequests: true }, false],
    ['skipSuccessfulRequests counts it', { skipSuccessfulRequests: true }, false],
    [
      'abortedRequestsFail refunds it as it leaves',
      { skipFailedRequests: true, abortedRequestsFail: true },
      true,
    ],
  ] as const) {
    it(`keeps its slot until the request is over; ${what}, once`, async () => {
      const limiter = slotAndBucket();
      const requestWasSuccessful = mock.fn(() => true);
      const gate = gateFor({ limiter, ...options, requestWasSuccessful });
      const outcome = await gate.check(CLIENT);
      assert.ok(outcome.action === 'next' && outcome.complete !== undefined);
      outcome.complete.left(0);
      outcome.complete.left(0);
      await settle();
      const afterLeft = refunded ? 3 : 2;
      assert.deepEqual(await held(limiter), [afterLeft, 0]);
      outcome.complete(undefined, 0);
      outcome.complete(undefined, 0);
      await settle();
      assert.deepEqual(await held(limiter), [afterLeft, 1]);
      assert.equal(requestWasSuccessful.mock.callCount(), 0);
    });
  }

  it('is not told once the request is over: the response was sent', async () => {
    const limiter = slotAndBucket();
    const gate = gateFor({ limiter, skipFailedRequests: true, abortedRequestsFail: true });
    const outcome = await gate.check(CLIENT);
    assert.ok(outcome.action === 'next' && outcome.complete !== undefined);
    outcome.complete(200, 200);
    outcome.complete.left(200);
    await settle();
    assert.deepEqual(await held(limiter), [2, 1]);
  });
});
