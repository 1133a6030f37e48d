// The figures put on the request (`req.rateLimit`): the decision's, and unknown when a fail mode decided.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createGate } from '../../src/gate/gate.js';
import { createLimiter, MemoryStore, tokenBucket } from '../../src/index.js';
import { degradedResponse, type Store } from '../../src/stores/store.js';

const policy = () => tokenBucket({ capacity: 3, refillPerSecond: 1 });
/** A store that cannot be reached: it answers with the request's fail mode, as RedisStore does. */
const unreachable: Store = {
  evaluate: (request) => degradedResponse(request.policies, request.failOpen ?? true, 1000, 1_000_000),
  reset: () => {},
};
const gateOn = (store: Store, failOpen: boolean) =>
  createGate<object>(
    { limiter: createLimiter({ policy: policy(), store, failOpen }) },
    {
      name: 'test',
      identifier: () => '203.0.113.7',
    },
  );

describe('rateLimitInfo', () => {
  it("reports the binding policy's figures of a decision the store made", async () => {
    const outcome = await gateOn(new MemoryStore({ clock: () => 1_000_000 }), true).check({});
    assert.ok(outcome.action === 'next');
    assert.deepEqual(
      { ...outcome.info, decision: undefined },
      {
        limit: 3,
        used: 1,
        remaining: 2,
        resetTime: new Date(1_001_000),
        key: '203.0.113.7',
        decision: undefined,
      },
    );
  });

  it('reports the use and the rest as unknown when a fail mode decided, admitted or denied', async () => {
    for (const failOpen of [true, false]) {
      const { info } = (await gateOn(unreachable, failOpen).check({})) as { info: object };
      assert.deepEqual(
        { ...info, decision: undefined },
        {
          limit: 3,
          used: undefined,
          remaining: undefined,
          resetTime: undefined,
          key: '203.0.113.7',
          decision: undefined,
        },
        `fail ${failOpen ? 'open' : 'closed'}`,
      );
    }
  });
});
