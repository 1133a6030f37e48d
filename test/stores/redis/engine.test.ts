// The Redis engine a store runs: the built-in twins always, one more library for each other set of kinds, the same
// for every process that met the same kinds, and one twin per kind.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLimiter, tokenBucket } from '../../../src/index.js';
import { BUILT_IN_ENGINE, withTwins } from '../../../src/stores/redis/engine/engine.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { leakyBucket } from '../../fixtures/leaky-bucket.js';

const leaky = leakyBucket({ capacity: 3, leak: 1, everyMs: 1000 });
/** A kind of its own beside the leaky bucket, named to sort before it. */
const early = {
  ...leaky,
  kind: 'early-bucket',
  lua: '{ load = read_integer } -- a twin that ends in a comment',
};

describe('the engine a store runs', () => {
  it('is the built-in one for the built-in policies, and another, named after its code, for a kind of its own', () => {
    assert.equal(
      withTwins(BUILT_IN_ENGINE, [tokenBucket({ capacity: 1, refillPerSecond: 1 })]),
      BUILT_IN_ENGINE,
    );
    const extended = withTwins(BUILT_IN_ENGINE, [leaky]);
    assert.notEqual(extended.functionName, BUILT_IN_ENGINE.functionName);
    assert.match(extended.functionName, /^tollgate_[0-9a-f]{16}$/);
    assert.ok(extended.library.includes(`function_name = '${extended.functionName}', callback = run`));
    assert.equal(withTwins(extended, [leaky]), extended, 'a kind it carries adds nothing');
  });

  it('is the same library whatever order a process met the same kinds in, built-ins first', () => {
    const one = withTwins(withTwins(BUILT_IN_ENGINE, [leaky]), [early]);
    const other = withTwins(withTwins(BUILT_IN_ENGINE, [early]), [leaky]);
    assert.equal(one.functionName, other.functionName);
    assert.deepEqual(
      [...one.twins.keys()],
      [...BUILT_IN_ENGINE.twins.keys(), 'early-bucket', 'leaky-bucket'],
    );
  });

  it('defines each twin on lines of its own, so that one ending in a comment hides nothing after it', () => {
    const { script } = withTwins(BUILT_IN_ENGINE, [early, leaky]);
    assert.match(script, /-- a twin that ends in a comment\n {2}elseif kind == 'leaky-bucket' then\n/);
  });

  it('refuses another twin for a kind it carries, at wire-up, and a kind that would need quoting', async () => {
    const impostor = { ...tokenBucket({ capacity: 1, refillPerSecond: 1 }), lua: '{}' };
    assert.throws(() => withTwins(BUILT_IN_ENGINE, [impostor]), {
      code: 'ERR_TOLLGATE_CONFIG',
      message: /^`policy` of kind "token-bucket" brings a Lua twin other than the one the store runs for it/,
    });
    // Refused when the limiter is made, before any request: the store has not even connected.
    const store = new RedisStore({ url: 'redis://127.0.0.1:1' });
    assert.throws(() => createLimiter({ policy: impostor, store }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'policy',
    });
    await store.close();
    assert.throws(() => withTwins(BUILT_IN_ENGINE, [{ ...leaky, kind: "it's" }]), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'kind',
    });
  });
});
