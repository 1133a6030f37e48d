// The gate's checkNow: an outcome without a promise when every step answers at once, the same outcome as check's,
// and a promise that never rejects otherwise.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TollgateError } from '../../src/core/errors.js';
import { createGate, type GateOutcome } from '../../src/gate/gate.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import type { Store } from '../../src/stores/store.js';
import { silentLogger } from '../../src/testing/adapter-contract.js';

const T0 = Date.UTC(2030, 0, 1);
const policy = tokenBucket({ capacity: 2, refillPerSecond: 1 });
const memory = () => new MemoryStore({ clock: () => T0, autoCleanup: false });

/** A gate whose "framework" request is the client address itself. */
function gateFor(
  options: Omit<Parameters<typeof createGate<string>>[0], 'logger'>,
  identifier: (ip: string) => string | undefined | Promise<string | undefined> = (ip) => ip,
) {
  return createGate<string>({ logger: silentLogger(), ...options }, { name: 'test', identifier });
}

/** The same store behind the contract alone: it answers with a promise, as a remote store does. */
function remote(store: MemoryStore): Store {
  return { evaluate: async (request) => store.evaluate(request), reset: (keys) => store.reset(keys) };
}

const isPromise = (value: unknown) => value instanceof Promise;

describe('checkNow', () => {
  it('answers at once on a memory store, with what check answers', async () => {
    const now = gateFor({ limiter: createLimiter({ policy, store: memory(), scope: 'now' }) });
    const later = gateFor({ limiter: createLimiter({ policy, store: memory(), scope: 'now' }) });
    for (let i = 0; i < 3; i++) {
      const outcome = now.checkNow('10.0.0.1');
      assert.equal(isPromise(outcome), false);
      assert.deepEqual(outcome, await later.check('10.0.0.1'));
    }
    assert.equal((now.checkNow('10.0.0.1') as GateOutcome).action, 'reject');
  });

  it('counts a request without an identity in the shared bucket, or refuses it, at once', () => {
    const shared = gateFor({ limiter: createLimiter({ policy, store: memory(), scope: 'anon' }) });
    const outcome = shared.checkNow('') as GateOutcome;
    assert.equal(outcome.action, 'next');
    assert.equal(outcome.info?.key, 'unknown');
    const strict = gateFor({
      limiter: createLimiter({ policy, store: memory(), scope: 'anon' }),
      unidentified: 'reject',
    });
    assert.deepEqual(pick(strict.checkNow('') as GateOutcome).slice(0, 2), ['fail', 400]);
  });

  it('a step that answers later makes it a promise of the same outcome', async () => {
    const limiter = () => createLimiter({ policy, store: memory(), scope: 'later' });
    const gates = [
      gateFor({ limiter: limiter(), skip: () => false }),
      gateFor({ limiter: limiter(), cost: () => 1 }),
      gateFor({
        limiter: limiter(),
        tiers: {
          resolve: () => 'paid',
          limiters: { paid: createLimiter({ policy, store: memory(), scope: 'paid' }) },
        },
      }),
      gateFor({ limiter: limiter() }, async (ip) => ip),
      gateFor({ limiter: createLimiter({ policy, store: remote(memory()), scope: 'later' }) }),
    ];
    for (const gate of gates) {
      const outcome = gate.checkNow('10.0.0.1');
      assert.equal(isPromise(outcome), true);
      assert.equal((await outcome).action, 'next');
    }
  });

  it('never throws nor rejects: a failure is a fail outcome, at once or later', async () => {
    const broken = new Error('identifier broke');
    const throwing = gateFor({ limiter: createLimiter({ policy, store: memory(), scope: 'fails' }) }, () => {
      throw broken;
    });
    assert.deepEqual(pick(throwing.checkNow('a') as GateOutcome), ['fail', 500, broken]);
    const rejecting = gateFor(
      { limiter: createLimiter({ policy, store: memory(), scope: 'fails' }) },
      async () => Promise.reject(broken),
    );
    assert.deepEqual(pick(await rejecting.checkNow('a')), ['fail', 500, broken]);
    const down: Store = { evaluate: async () => Promise.reject(broken), reset: () => {} };
    const unreachable = gateFor({ limiter: createLimiter({ policy, store: down, scope: 'fails' }) });
    assert.deepEqual(pick(await unreachable.checkNow('a')), ['fail', 500, broken]);
    // An identity that is not a string is refused by the limiter: an argument error, at once on a memory store.
    const unusable = gateFor(
      { limiter: createLimiter({ policy, store: memory(), scope: 'fails' }) },
      () => 5 as never,
    );
    const failure = unusable.checkNow('a') as GateOutcome;
    assert.equal(failure.action, 'fail');
    assert.ok(failure.action === 'fail' && failure.error instanceof TollgateError);
  });
});

function pick(outcome: GateOutcome): unknown[] {
  return outcome.action === 'fail' ? [outcome.action, outcome.status, outcome.error] : [outcome.action];
}
