// The adapter contract's idioms: the decision's figures where each framework keeps per-request data, and a
// rejection thrown to the app's own error handler where the adapter can throw one.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Decision } from '../decision/decision.js';
import { CAPACITY, fixture, rateLimitFields, T0 } from './adapter-contract-fixtures.js';
import {
  type AdapterCapabilities,
  CLIENT,
  type ContractOptions,
  type Figures,
  request,
  shapedByApp,
  type WithApp,
} from './adapter-contract-http.js';

/** The figures a route reads, with the decision's verdict and clock standing for the decision they came from. */
function readable(figures: Figures) {
  if (figures === undefined) return undefined;
  const { limit, used, remaining, resetTime, key, decision } = figures;
  return { limit, used, remaining, resetTime, key, allowed: decision.allowed, nowMs: decision.nowMs };
}

/**
 * What the fixture's bucket (3 units, one back per second, on a clock fixed at T0) reports for the n-th request
 * from CLIENT: n units used, and back at rest n seconds on.
 */
function nth(n: number, key = CLIENT) {
  const used = Math.min(n, CAPACITY);
  return {
    limit: CAPACITY,
    used,
    remaining: CAPACITY - used,
    resetTime: new Date(T0 + used * 1000),
    key,
    allowed: n <= CAPACITY,
    nowMs: T0,
  };
}

export function idiomsContract(withApp: WithApp, capabilities: AdapterCapabilities): void {
  it("the route reads the request's figures from the framework's own place, exact on a fixed clock", async () => {
    const { limiter, logger } = fixture();
    const seen: Figures[] = [];
    const route = (figures: Figures) => {
      seen.push(figures);
      return {};
    };
    await withApp({ limiter, logger, route }, async (app) => {
      for (let i = 0; i < CAPACITY; i++) assert.equal((await request(app)).status, 200);
    });
    assert.deepEqual(seen.map(readable), [nth(1), nth(2), nth(3)]);
  });

  it("a rejected request's figures are there for the handler, beside the decision they came from", async () => {
    const { limiter, logger } = fixture();
    const rejected: [Decision, Figures][] = [];
    const handler = (decision: Decision, figures: Figures) => {
      rejected.push([decision, figures]);
      return { status: 429, body: { remaining: figures?.remaining } };
    };
    await withApp({ limiter, logger, handler }, async (app) => {
      for (let i = 0; i < CAPACITY; i++) await request(app);
      assert.deepEqual((await request(app)).body, { remaining: 0 });
    });
    assert.equal(rejected.length, 1);
    const [[decision, figures] = []] = rejected;
    assert.deepEqual(readable(figures), nth(CAPACITY + 1));
    assert.equal(figures?.decision, decision);
  });

  it("the figures name the identity counted; a skipped request has none; shadow mode's over-limit one has them", async () => {
    const seen: Figures[] = [];
    const route = (figures: Figures) => {
      seen.push(figures);
      return {};
    };
    /** One request to an app on a fresh fixture with `more`. */
    const once = async (more: ContractOptions) => {
      const { limiter, logger } = fixture();
      await withApp({ limiter, logger, route, ...more }, async (app) => {
        assert.equal((await request(app)).status, 200);
      });
    };
    await once({ identifier: () => 'alice' });
    await once({ skip: () => true });
    const shadow = fixture();
    await withApp({ limiter: shadow.limiter, logger: shadow.logger, route, shadow: true }, async (app) => {
      for (let i = 0; i <= CAPACITY; i++) assert.equal((await request(app)).status, 200);
    });
    assert.deepEqual(seen.map(readable), [nth(1, 'alice'), undefined, nth(1), nth(2), nth(3), nth(4)]);
  });

  const thrown = capabilities.thrown ? {} : { skip: 'the binding declares no throw mode (thrown: false)' };
  it(
    "in throw mode the app's own error handler shapes the rejection, and the rate-limit headers survive",
    thrown,
    async () => {
      const { limiter, expected, logger } = fixture();
      await withApp({ limiter, logger, thrown: true }, async (app) => {
        for (let i = 0; i < CAPACITY; i++) {
          const answer = await request(app);
          assert.equal(answer.status, 200);
          assert.deepEqual(rateLimitFields(answer.headers), await expected());
        }
        const denied = await request(app);
        assert.deepEqual([denied.status, denied.body], [429, shapedByApp(429).body]);
        assert.deepEqual(rateLimitFields(denied.headers), await expected());
      });
      const other = fixture();
      await withApp({ limiter: other.limiter, logger, thrown: true, statusCode: 503 }, async (app) => {
        for (let i = 0; i < CAPACITY; i++) await request(app);
        const denied = await request(app);
        assert.deepEqual([denied.status, denied.body], [503, shapedByApp(503).body]);
        assert.equal(denied.headers.get('retry-after'), '1');
      });
      assert.equal(logger.error.mock.callCount(), 0);
    },
  );
}
