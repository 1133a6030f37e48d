// tollgate/otel: the decisions, their durations, near-limit clients, store health and the stores' own figures,
// read back through the OpenTelemetry SDK exactly, the store figures from a real RedisStore broken for real.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { metrics } from '@opentelemetry/api';
import {
  type DataPoint,
  DataPointType,
  type Histogram,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import type { Decision } from '../../src/decision/decision.js';
import { createLimiter, type Limiter, MemoryStore, tokenBucket } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { degradedResponse, type Store } from '../../src/stores/store.js';
import { createOtelMetrics } from '../../src/telemetry/otel/index.js';
import { startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

/** A reader the test collects from when it chooses (cumulative, the SDK's default). */
class CollectingReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

interface Read {
  /** The kind of points, and for sums whether they only grow (a counter's). */
  readonly type: string;
  readonly unit: string;
  readonly description: string;
  readonly points: { readonly attributes: Record<string, unknown>; readonly value: unknown }[];
}

/** Every metric collected now, by name. */
async function collect(reader: MetricReader): Promise<Record<string, Read>> {
  const { resourceMetrics, errors } = await reader.collect();
  assert.deepEqual(errors, []);
  const read: Record<string, Read> = {};
  for (const { metrics: collected } of resourceMetrics.scopeMetrics)
    for (const metric of collected)
      read[metric.descriptor.name] = {
        type: `${DataPointType[metric.dataPointType]}${'isMonotonic' in metric && metric.isMonotonic ? ' monotonic' : ''}`,
        unit: metric.descriptor.unit,
        description: metric.descriptor.description,
        points: (metric.dataPoints as DataPoint<unknown>[]).map(({ attributes, value }) => ({
          attributes,
          value,
        })),
      };
  return read;
}

/** A metric's points as `attribute values joined -> value`, for exact comparison. */
function values(read: Record<string, Read>, name: string): Record<string, unknown> {
  const metric = read[name];
  assert.ok(metric, `${name} was collected`);
  return Object.fromEntries(
    metric.points.map(({ attributes, value }) => [Object.values(attributes).join(' '), value]),
  );
}

function setup() {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  return { reader, provider };
}

/** A store that cannot reach its data: every answer is the limiter's fail mode. */
function unreachable(now: () => number): Store {
  return {
    evaluate: (request) => degradedResponse(request.policies, request.failOpen ?? true, 1000, now()),
    reset: () => {},
  };
}

const DURATION_BOUNDARIES = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** The histogram point OpenTelemetry holds after these durations, each in its own bucket by `bucket`. */
function histogram(seconds: readonly number[], bucket: number): Histogram {
  const counts = DURATION_BOUNDARIES.map(() => 0).concat(0);
  counts[bucket] = seconds.length;
  return {
    min: Math.min(...seconds),
    max: Math.max(...seconds),
    sum: seconds.reduce((sum, value) => sum + value, 0),
    buckets: { boundaries: DURATION_BOUNDARIES, counts },
    count: seconds.length,
  };
}

describe('createOtelMetrics', () => {
  afterEach(() => metrics.disable());

  it('counts every outcome by scope, times each decision and counts near-limit ones, exactly', async () => {
    const { reader, provider } = setup();
    let up = true;
    const otel = createOtelMetrics({ meterProvider: provider, storeHealth: () => up });
    const clock = { now: 1_000_000 };
    const store = new MemoryStore({ clock: () => clock.now, autoCleanup: false });
    const bucket = tokenBucket({ capacity: 5, refillPerSecond: 1 });
    const api = createLimiter({ policy: bucket, store, scope: 'api' });
    const login = createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }),
      store,
      scope: 'login',
      blockMs: 60_000,
    });
    const edge = (failOpen: boolean) =>
      createLimiter({ policy: bucket, store: unreachable(() => clock.now), scope: 'edge', failOpen });
    const decide = async (limiter: Limiter, latencyMs: number, shadow = false): Promise<Decision> => {
      const decision = await limiter.consume('client');
      otel.onDecision({ scope: limiter.scope, decision, latencyMs, shadow });
      return decision;
    };
    // api: five allowed (the last leaves 0 of 5: near the limit), one denied, one denied in shadow mode.
    for (let i = 0; i < 5; i++) assert.equal((await decide(api, 2)).allowed, true);
    assert.equal((await decide(api, 2)).allowed, false);
    assert.equal((await decide(api, 2, true)).allowed, false);
    // login: one allowed (near the limit), then denied and locked out at once, then still locked out.
    assert.equal((await decide(login, 0.25)).allowed, true);
    assert.equal((await decide(login, 0.25)).blocked, true);
    assert.equal((await decide(login, 0.25)).blocked, true);
    // edge: the store is unreachable; a fail-open 0 left is no real balance, so it is not near the limit.
    assert.equal((await decide(edge(true), 30)).degraded, 'fail-open');
    assert.equal((await decide(edge(false), 30)).degraded, 'fail-closed');

    const read = await collect(reader);
    assert.deepEqual(values(read, 'tollgate.decisions'), {
      'api allowed': 5,
      'api denied': 1,
      'api shadow': 1,
      'login allowed': 1,
      'login locked-out': 2,
      'edge degraded-allowed': 1,
      'edge degraded-denied': 1,
    });
    assert.deepEqual(values(read, 'tollgate.near_limit'), { api: 1, login: 1 });
    assert.deepEqual(values(read, 'tollgate.decision.duration'), {
      api: histogram(Array(7).fill(0.002), 4),
      login: histogram(Array(3).fill(0.00025), 1),
      edge: histogram(Array(2).fill(0.03), 8),
    });
    assert.deepEqual(values(read, 'tollgate.store.up'), { '': 1 });
    assert.deepEqual(
      Object.fromEntries(Object.entries(read).map(([name, { type, unit }]) => [name, `${type} ${unit}`])),
      {
        'tollgate.decisions': 'SUM monotonic {decision}',
        'tollgate.decision.duration': 'HISTOGRAM s',
        'tollgate.near_limit': 'SUM monotonic {decision}',
        'tollgate.store.up': 'GAUGE ',
      },
    );
    // The help Prometheus gives the same figure.
    assert.equal(
      read['tollgate.decision.duration']?.description,
      "Time a limiter took to decide, the store's round trip included.",
    );
    up = false;
    assert.deepEqual(values(await collect(reader), 'tollgate.store.up'), { '': 0 });
  });

  it("reads a store's figures at collection only, under the prefix, until close()", async () => {
    const { reader, provider } = setup();
    const clock = { now: 1_000_000 };
    const store = new MemoryStore({ maxBuckets: 1, clock: () => clock.now, autoCleanup: false });
    let reads = 0;
    const counted = {
      stats: () => {
        reads++;
        return store.stats();
      },
    };
    let checks = 0;
    const otel = createOtelMetrics({
      meter: provider.getMeter('app'),
      prefix: 'app.rate_limit.',
      stores: [counted],
      storeHealth: () => {
        checks++;
        return true;
      },
    });
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }), store });
    for (const id of ['a', 'b', 'c'])
      otel.onDecision({ scope: 's', decision: await limiter.consume(id), latencyMs: 1, shadow: false });
    assert.equal(reads, 1, 'read once at wire-up, then never per decision');
    const read = await collect(reader);
    assert.equal(reads, 2, 'one read per collection for all the store instruments');
    assert.deepEqual(Object.keys(read).sort(), [
      'app.rate_limit.decision.duration',
      'app.rate_limit.decisions',
      'app.rate_limit.near_limit',
      'app.rate_limit.store.evictions',
      'app.rate_limit.store.up',
    ]);
    // 'a' and 'b' each still owed their token when the next client came.
    assert.deepEqual(values(read, 'app.rate_limit.store.evictions'), { 'at-rest': 0, live: 2, held: 0 });
    assert.equal(read['app.rate_limit.store.evictions']?.type, 'SUM monotonic');
    otel.close();
    await collect(reader);
    assert.deepEqual([reads, checks], [2, 1], 'closed: neither the store nor its health is read again');
  });

  it('uses the global meter provider by default', async () => {
    const { reader, provider } = setup();
    metrics.setGlobalMeterProvider(provider);
    const otel = createOtelMetrics();
    const decision: Decision = { allowed: true, limit: 10, remaining: 9, resetMs: 0, nowMs: 0, policies: [] };
    otel.onDecision({ scope: 'global', decision, latencyMs: 1, shadow: false });
    assert.deepEqual(values(await collect(reader), 'tollgate.decisions'), { 'global allowed': 1 });
  });

  it('checks its options at wire-up, naming the option', () => {
    const { provider } = setup();
    const meter = provider.getMeter('app');
    const cases: [Record<string, unknown>, string][] = [
      [{ meter: {} }, 'meter'],
      [{ meter, meterProvider: provider }, 'meterProvider'],
      [{ meterProvider: {} }, 'meterProvider'],
      [{ meter, prefix: '1tollgate.' }, 'prefix'],
      [{ meter, prefix: 'toll gate.' }, 'prefix'],
      [{ meter, storeHealth: true }, 'storeHealth'],
      [{ meter, stores: [{}] }, 'stores'],
    ];
    for (const [options, option] of cases)
      assert.throws(
        () => createOtelMetrics(options as never),
        { code: 'ERR_TOLLGATE_CONFIG', option },
        option,
      );
  });
});

describeWithRedis('createOtelMetrics over a real RedisStore', () => {
  it('exports its timeouts, errors by kind, breaker state and trips, script reloads, batches and deny-cache hits', async (t) => {
    // The breaker probes on setInterval alone: mocked, it probes only when the test ticks it.
    t.mock.timers.enable({ apis: ['setInterval'] });
    const server = await startRedisServer();
    let breakerClosed = () => {};
    const closed = new Promise<void>((resolve) => (breakerClosed = resolve));
    const store = new RedisStore({
      url: server.url,
      commandTimeoutMs: 150,
      reconnectCooldownMs: 200,
      breakerThreshold: 2,
      logger: {
        // The store logs the breaker's closing: the test waits on that, not on a clock.
        warn: (message) => {
          if (String(message).includes('circuit breaker closed')) breakerClosed();
        },
        error: () => {},
      },
    });
    try {
      await store.connect();
      const { reader, provider } = setup();
      createOtelMetrics({ meterProvider: provider, stores: [store] });
      const limiter = createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 0.001 }), store });
      assert.equal((await limiter.consume('x')).allowed, true);
      assert.equal((await limiter.consume('x')).allowed, false);
      // The same denial again: the deny cache answers it, without Redis.
      assert.equal((await limiter.consume('x')).allowed, false);
      await server.command('FUNCTION', 'FLUSH');
      assert.equal((await limiter.consume('y')).allowed, true);
      server.pause();
      try {
        // Two calls time out, and two failures in a row open the breaker.
        for (let i = 0; i < 2; i++) assert.equal((await limiter.consume('z')).degraded, 'fail-open');
        const read = await collect(reader);
        assert.deepEqual(values(read, 'tollgate.store.timeouts'), { '': 2 });
        assert.deepEqual(values(read, 'tollgate.store.errors'), {
          timeout: 2,
          connection: 0,
          reply: 0,
          script: 0,
        });
        assert.deepEqual(values(read, 'tollgate.store.breaker.state'), { '': 1 });
        assert.deepEqual(values(read, 'tollgate.store.breaker.trips'), { '': 1 });
        // Sent in full twice: to the fresh server by the first decision, and after the flush.
        assert.deepEqual(values(read, 'tollgate.store.script.reloads'), { '': 2 });
        assert.deepEqual(values(read, 'tollgate.store.batches'), { '': 5 });
        assert.deepEqual(values(read, 'tollgate.store.batched_decisions'), { '': 5 });
        assert.deepEqual(values(read, 'tollgate.deny_cache.hits'), { '': 1 });
      } finally {
        server.resume();
      }
      // The breaker's next probe, once Redis answers again, closes it.
      await server.command('PING');
      assert.equal(store.breakerOpen, true);
      t.mock.timers.tick(200);
      await closed;
      assert.equal(store.breakerOpen, false);
      assert.deepEqual(values(await collect(reader), 'tollgate.store.breaker.state'), { '': 0 });
      await server.kill();
      assert.equal((await limiter.consume('w')).degraded, 'fail-open');
      const read = await collect(reader);
      assert.deepEqual(values(read, 'tollgate.store.errors'), {
        timeout: 2,
        connection: 1,
        reply: 0,
        script: 0,
      });
      assert.deepEqual(values(read, 'tollgate.store.breaker.trips'), { '': 1 });
    } finally {
      await store.close();
      await server.stop();
    }
  });
});
