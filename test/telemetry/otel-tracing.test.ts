// The spans of one request, step by step, through the OpenTelemetry SDK, for each flow a user meets on one
// process and one Redis server (the cluster's flow is in test/cluster/).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createLimiter, MemoryStore, type Store, tokenBucket } from '../../src/index.js';
import type { StoreResponse } from '../../src/stores/store.js';
import { traceTollgate } from '../../src/telemetry/otel/index.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';
import { FLOWS, type FlowServers, runFlow } from '../harness/trace-flows.js';
import { assertSpans, type SpanView, spansOf } from './span-views.js';

/** Each flow's spans, parent first, with the attributes that tell the flow apart. */
const EXPECTED: Record<string, (views: SpanView[]) => void> = {
  'memory, allowed': (views) =>
    assertSpans(views, [
      ['tollgate.request', undefined, { adapter: 'rateLimit', outcome: 'next' }],
      [
        'tollgate.decision',
        'tollgate.request',
        { action: 'consume', cost: 1, store: 'MemoryStore', allowed: true },
      ],
    ]),
  'memory, denied': (views) =>
    assertSpans(views, [
      ['tollgate.request', undefined, { outcome: 'reject', status: 429 }],
      ['tollgate.decision', 'tollgate.request', { allowed: false, remaining: 0 }],
    ]),
  'Redis, allowed': (views) => {
    assertSpans(views, [
      ['tollgate.request', undefined, { outcome: 'next' }],
      ['tollgate.decision', 'tollgate.request', { store: 'RedisStore', allowed: true }],
      ['tollgate.store', 'tollgate.decision', { action: 'consume', node: '', allowed: true, batch: 1 }],
      ['tollgate.engine', 'tollgate.store', { node: '', decisions: 1, action: 'consume' }],
    ]);
    assert.match(String(views[3]?.attributes.engine), /^tollgate_[0-9a-f]{16}$/);
  },
  'Redis, denied by the deny cache': (views) =>
    // No engine call: the deny cache answered.
    assertSpans(views, [
      ['tollgate.request', undefined, { outcome: 'reject', status: 429 }],
      ['tollgate.decision', 'tollgate.request', { allowed: false }],
      ['tollgate.store', 'tollgate.decision', { deny_cache: true, allowed: false }],
    ]),
  'Redis unreachable, the fail mode answers': (views) => {
    assertSpans(views, [
      ['tollgate.request', undefined, { outcome: 'next' }],
      ['tollgate.decision', 'tollgate.request', { allowed: true, fail_mode: 'fail-open' }],
      ['tollgate.store', 'tollgate.decision', { fail_mode: 'fail-open' }],
      ['tollgate.engine', 'tollgate.store', { decisions: 1 }],
    ]);
    assert.equal(views[3]?.status, 'error', 'the engine call failed');
  },
};

describeWithRedis('spans of one request, through the OpenTelemetry SDK', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const servers: { redis?: RedisServer } = {};
  before(async () => {
    servers.redis = await startRedisServer();
  });
  after(async () => servers.redis?.stop());

  for (const flow of FLOWS.filter(({ name }) => name in EXPECTED)) {
    it(flow.name, async () => {
      const found: FlowServers = servers.redis === undefined ? {} : { redisUrl: servers.redis.url };
      const views = await runFlow(flow, found, async (request) => {
        exporter.reset();
        const tracing = traceTollgate({ tracerProvider: provider });
        try {
          await request();
        } finally {
          tracing.stop();
        }
        return spansOf(exporter.getFinishedSpans());
      });
      (EXPECTED[flow.name] as (views: SpanView[]) => void)(views);
    });
  }

  it('carries the identifier and the key only when asked to', async () => {
    const flow = FLOWS[0] as (typeof FLOWS)[number];
    for (const identifiers of [false, true]) {
      const views = await runFlow(flow, {}, async (request) => {
        exporter.reset();
        const tracing = traceTollgate({ tracerProvider: provider, identifiers });
        await request();
        tracing.stop();
        return spansOf(exporter.getFinishedSpans());
      });
      const decision = views.find(({ name }) => name === 'tollgate.decision');
      assert.equal(decision?.attributes.identifier, identifiers ? '127.0.0.1' : undefined);
      assert.equal(String(decision?.attributes.key).endsWith('|127.0.0.1'), identifiers);
    }
  });

  it('ends the spans of steps in flight when stopped, marked so', async () => {
    exporter.reset();
    let answer: (response: StoreResponse) => void = () => {};
    const memory = new MemoryStore();
    const slow: Store = {
      evaluate: (request) =>
        new Promise((resolve) => {
          answer = () => resolve(memory.evaluate(request));
        }),
      reset: () => {},
    };
    const limiter = createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }),
      store: slow,
      scope: 'slow',
    });
    const tracing = traceTollgate({ tracerProvider: provider });
    const decision = limiter.consume('client');
    tracing.stop();
    assertSpans(spansOf(exporter.getFinishedSpans()), [['tollgate.decision', undefined, { stopped: true }]]);
    answer({} as StoreResponse);
    assert.equal((await decision).allowed, true);
    assert.equal(exporter.getFinishedSpans().length, 1, 'and nothing more once the step ends');
  });

  it('starts no span once stopped, and refuses a tracer that is not one', async () => {
    exporter.reset();
    traceTollgate({ tracerProvider: provider }).stop();
    await runFlow(FLOWS[0] as (typeof FLOWS)[number], {}, async (request) => request());
    assert.deepEqual(exporter.getFinishedSpans(), []);
    assert.throws(() => traceTollgate({ tracer: {} as never }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'tracer',
    });
  });
});
