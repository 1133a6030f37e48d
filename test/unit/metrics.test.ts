// tollgate/metrics: outcomes by scope, latency, near-limit, store health and totals, in the caller's registry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { Decision } from '../../src/decision.js';
import { decisionOutcome } from '../../src/decision-outcome.js';
import { createMetrics } from '../../src/metrics/index.js';

function decision(fields: Partial<Decision>): Decision {
  return { allowed: true, limit: 10, remaining: 5, resetMs: 0, nowMs: 0, policies: [], ...fields };
}

describe('decisionOutcome', () => {
  it('names the six outcomes', () => {
    assert.equal(decisionOutcome(decision({}), false), 'allowed');
    assert.equal(decisionOutcome(decision({ allowed: false }), false), 'denied');
    assert.equal(decisionOutcome(decision({ allowed: false, blocked: true }), false), 'locked-out');
    assert.equal(decisionOutcome(decision({ allowed: false, blocked: true }), true), 'shadow');
    assert.equal(decisionOutcome(decision({ allowed: false }), true), 'shadow');
    assert.equal(decisionOutcome(decision({ degraded: 'fail-open' }), false), 'degraded-allowed');
    assert.equal(
      decisionOutcome(decision({ allowed: false, degraded: 'fail-closed' }), false),
      'degraded-denied',
    );
    assert.equal(
      decisionOutcome(decision({ allowed: false, degraded: 'fallback' }), false),
      'degraded-denied',
    );
  });
});

describe('createMetrics', () => {
  it('registers into the given registry and counts every outcome, latency and near-limit decisions', async () => {
    const registry = new Registry();
    let up = true;
    const metrics = createMetrics({ registry, storeHealth: () => up });
    const event = (fields: Partial<Decision>, shadow = false) =>
      metrics.onDecision({ scope: 'api', decision: decision(fields), latencyMs: 2, shadow });
    event({ remaining: 9 });
    event({ remaining: 1 });
    event({ allowed: false, remaining: 0 });
    event({ allowed: false, remaining: 0 }, true);
    event({ remaining: 0, degraded: 'fail-open' });
    event({ allowed: false, degraded: 'fail-closed' });
    event({ allowed: false, blocked: true });
    const text = await registry.metrics();
    const counts = {
      allowed: 2,
      denied: 1,
      'locked-out': 1,
      shadow: 1,
      'degraded-allowed': 1,
      'degraded-denied': 1,
    };
    for (const [outcome, count] of Object.entries(counts))
      assert.match(
        text,
        new RegExp(`tollgate_decisions_total\\{scope="api",outcome="${outcome}"\\} ${count}\n`),
      );
    // Only the real allowed decision with 1 of 10 left is near the limit; a fail-open 0 is no real balance.
    assert.match(text, /tollgate_near_limit_total\{scope="api"\} 1\n/);
    assert.match(text, /tollgate_decision_duration_seconds_bucket\{le="0.0025",scope="api"\} 7/);
    assert.match(text, /tollgate_store_up 1/);
    up = false;
    assert.match(await registry.metrics(), /tollgate_store_up 0/);
    assert.deepEqual(await metrics.totals(), {
      total: 7,
      allowed: 4,
      blocked: 3,
      scopes: { api: { total: 7, allowed: 4, blocked: 3 } },
    });
  });

  it('two instances in two registries do not collide; a health check that throws reads as down', async () => {
    const a = createMetrics();
    const b = createMetrics({
      storeHealth: () => {
        throw new Error('unreachable');
      },
    });
    assert.notEqual(a.registry, b.registry);
    assert.match(await b.registry.metrics(), /tollgate_store_up 0/);
  });
});
