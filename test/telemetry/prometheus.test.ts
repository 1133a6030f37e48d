// tollgate/metrics: outcomes by scope, decision duration, near-limit, store health, the stores' own figures and
// totals, in the caller's registry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { Decision } from '../../src/decision/decision.js';
import { decisionOutcome } from '../../src/decision/outcome.js';
import { createLimiter, MemoryStore, tokenBucket } from '../../src/index.js';
import type { StoreStats } from '../../src/stores/store.js';
import { createMetrics } from '../../src/telemetry/prometheus/index.js';

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
    assert.match(text, /\ntollgate_decision_duration_seconds_bucket\{le="0.001",scope="api"\} 0\n/);
    assert.match(text, /\ntollgate_decision_duration_seconds_bucket\{le="0.0025",scope="api"\} 7\n/);
    assert.match(text, /\ntollgate_decision_duration_seconds_sum\{scope="api"\} 0.014\n/);
    assert.match(text, /\ntollgate_decision_duration_seconds_count\{scope="api"\} 7\n/);
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

  it('reads the stores given at each scrape, never per decision: each figure summed over them', async () => {
    let reads = 0;
    const figures = {
      timeouts: 3,
      errors: { timeout: 3, connection: 1, reply: 0, script: 2 },
      breakers: [{ node: '', open: false }],
      breakerTrips: 1,
      scriptReloads: 2,
      batches: 10,
      batchedDecisions: 25,
      denyCacheHits: 4,
    };
    const redisLike = {
      stats: (): StoreStats => {
        reads++;
        return figures;
      },
    };
    const cluster = {
      stats: (): StoreStats => ({
        ...figures,
        breakers: [
          { node: '10.0.0.1:7000', open: true },
          { node: '10.0.0.2:7000', open: false },
        ],
      }),
    };
    const metrics = createMetrics({ stores: [redisLike, cluster, new MemoryStore({ autoCleanup: false })] });
    const readsAtWireUp = reads;
    for (let i = 0; i < 100; i++)
      metrics.onDecision({ scope: 'api', decision: decision({}), latencyMs: 1, shadow: false });
    assert.equal(reads, readsAtWireUp, 'decisions read no store');
    const lines = (await metrics.registry.metrics()).split('\n');
    for (const line of [
      '# HELP tollgate_store_timeouts_total Calls to the store that did not answer within their time budget (decisions, probes, resets, connecting).',
      '# TYPE tollgate_store_timeouts_total counter',
      'tollgate_store_timeouts_total 6',
      '# TYPE tollgate_store_errors_total counter',
      'tollgate_store_errors_total{kind="timeout"} 6',
      'tollgate_store_errors_total{kind="connection"} 2',
      'tollgate_store_errors_total{kind="reply"} 0',
      'tollgate_store_errors_total{kind="script"} 4',
      '# TYPE tollgate_store_breaker_state gauge',
      'tollgate_store_breaker_state 0',
      'tollgate_store_breaker_state{node="10.0.0.1:7000"} 1',
      'tollgate_store_breaker_state{node="10.0.0.2:7000"} 0',
      'tollgate_store_breaker_trips_total 2',
      'tollgate_store_script_reloads_total 4',
      'tollgate_store_batches_total 20',
      'tollgate_store_batched_decisions_total 50',
      'tollgate_deny_cache_hits_total 8',
      '# TYPE tollgate_store_evictions_total counter',
      'tollgate_store_evictions_total{state="at-rest"} 0',
      'tollgate_store_evictions_total{state="live"} 0',
      'tollgate_store_evictions_total{state="held"} 0',
    ])
      assert.ok(lines.includes(line), line);
    // Both stores' running totals as they are now: a counter set afresh from the stores at each scrape.
    figures.timeouts = 4;
    assert.ok((await metrics.registry.metrics()).includes('\ntollgate_store_timeouts_total 8\n'));
  });

  it("exports only the figures its stores keep: MemoryStore's evictions by state, under the prefix", async () => {
    const clock = { now: 0 };
    const store = new MemoryStore({ maxBuckets: 1, clock: () => clock.now, autoCleanup: false });
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }), store });
    await limiter.consume('a');
    await limiter.consume('b');
    // 'a' still owed its token: a live eviction; 'b', a second later, owes none: at rest.
    clock.now = 1000;
    await limiter.consume('c');
    const text = await createMetrics({ stores: [store], prefix: 'app_' }).registry.metrics();
    assert.match(
      text,
      /\napp_store_evictions_total\{state="at-rest"\} 1\napp_store_evictions_total\{state="live"\} 1\napp_store_evictions_total\{state="held"\} 0\n/,
    );
    assert.deepEqual(
      text.split('\n').filter((line) => line.startsWith('# TYPE')),
      [
        '# TYPE app_decisions_total counter',
        '# TYPE app_decision_duration_seconds histogram',
        '# TYPE app_near_limit_total counter',
        '# TYPE app_store_up gauge',
        '# TYPE app_store_evictions_total counter',
      ],
    );
  });

  it("reads a custom store's eviction count alone as evictions of live state", async () => {
    const legacy = { evaluate() {}, reset() {}, stats: () => ({ evictions: 7 }) } as unknown as MemoryStore;
    const text = await createMetrics({ stores: [legacy] }).registry.metrics();
    assert.match(text, /\ntollgate_store_evictions_total\{state="live"\} 7\n/);
  });

  it('refuses stores that report no stats, naming the option', () => {
    for (const stores of [{}, [{}], [new MemoryStore({ autoCleanup: false }), { evaluate() {} }]])
      assert.throws(() => createMetrics({ stores: stores as never }), {
        code: 'ERR_TOLLGATE_CONFIG',
        option: 'stores',
      });
  });
});
