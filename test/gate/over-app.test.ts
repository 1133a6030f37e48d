// A route's options over its app's: which buckets the route spends from, and what it inherits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type GateOptions, overApp } from '../../src/gate/options.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { Tiers } from '../../src/limiter/tiers.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';

const store = new MemoryStore({ autoCleanup: false });
const shared = createLimiter({ policy: tokenBucket({ requestsPerMinute: 100 }), store, scope: 'app' });
const pro = createLimiter({ policy: tokenBucket({ requestsPerMinute: 1000 }), store, scope: 'pro' });
const tiers: Tiers<unknown> = { resolve: () => 'pro', limiters: { pro } };
const app: GateOptions<unknown> = {
  requestsPerMinute: 100,
  scope: 'app',
  failOpen: false,
  tiers,
  skipFailedRequests: true,
};

describe('overApp', () => {
  it('a route without limiter options spends from the app limiter, its tiers included', () => {
    assert.deepEqual(overApp(app, { cost: 2 }, shared), {
      tiers,
      skipFailedRequests: true,
      cost: 2,
      limiter: shared,
    });
  });

  it("a route with a limit of its own does not inherit the app's tiers, which would bypass that limit", () => {
    assert.deepEqual(overApp(app, { requestsPerMinute: 2, scope: 'login' }, shared), {
      skipFailedRequests: true,
      store,
      failOpen: false,
      requestsPerMinute: 2,
      scope: 'login',
    });
    const own = createLimiter({ policy: tokenBucket({ requestsPerMinute: 2 }), store, scope: 'own' });
    assert.deepEqual(overApp(app, { limiter: own }, shared), { skipFailedRequests: true, limiter: own });
  });

  it('a route may bring tiers of its own', () => {
    assert.equal(overApp(app, { requestsPerMinute: 2, tiers }, shared).tiers, tiers);
  });
});
