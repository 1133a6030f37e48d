// POST /api/simulate on the demo app: the same numbers as simulate(), the library's errors as 400s, and the page's files.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createDemoApp } from '../../../demo/demo-app.js';
import {
  boundaryBurst,
  type LimiterSpec,
  type PolicySpec,
  random,
  type SimulationInput,
  simulate,
  simulationWork,
} from '../../../src/simulator/engine/index.js';
import { PAGE_FILES } from '../../../src/simulator/server/page-files.js';
import {
  MAX_SIMULATED_ARRIVALS,
  MAX_SIMULATION_WORK,
} from '../../../src/simulator/server/simulate-endpoint.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { pointed } from '../../harness/error-pointer.js';

/**
 * The costliest shape for a sliding window log: a 1 ms window, arrivals 1 ms apart and a cost equal to the limit,
 * so every arrival is admitted, drops the whole log and writes a full one.
 */
function churningLogs(limit: number): SimulationInput {
  return {
    policies: Array.from({ length: 4 }, () => ({ kind: 'sliding-window', limit, windowMs: 1 }) as const),
    arrivals: Array.from({ length: MAX_SIMULATED_ARRIVALS }, (_, i) => i),
    cost: limit,
  };
}

const POLICIES: PolicySpec[] = [
  { kind: 'fixed-window', limit: 5, windowMs: '10s' },
  { kind: 'sliding-window', limit: 5, windowMs: 10_000 },
  { kind: 'token-bucket', capacity: 5, refillPerSecond: 1 },
  { kind: 'sliding-window-counter', limit: 5, windowMs: 10_000 },
];

describe('POST /api/simulate', () => {
  const store = new MemoryStore();
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer(createDemoApp({ store }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // fetch keeps its sockets alive; without this, close waits out the keep-alive timeout.
    server.closeAllConnections();
    await closed;
    store.close();
  });

  async function post(body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${base}/api/simulate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  it('answers a pattern with exactly what simulate() computes', async () => {
    const { status, json } = await post({
      policies: POLICIES,
      pattern: { kind: 'boundary-burst', limit: 5, windowMs: '10s' },
    });
    assert.equal(status, 200);
    assert.deepEqual(
      json,
      JSON.parse(JSON.stringify(simulate({ policies: POLICIES, arrivals: boundaryBurst(5, 10_000) }))),
    );
  });

  it('answers pasted arrivals and a cost with exactly what simulate() computes', async () => {
    const input = { policies: POLICIES.slice(0, 2), arrivals: random(2, 60_000, 5), cost: 2 };
    const { status, json } = await post(input);
    assert.equal(status, 200);
    assert.deepEqual(json, JSON.parse(JSON.stringify(simulate(input))));
  });

  it('answers a concurrency limit and a lockout with exactly what simulate() computes', async () => {
    const policies: LimiterSpec[] = [
      { kind: 'concurrency', max: 2, leaseMs: '30s' },
      { kind: 'fixed-window', limit: 3, windowMs: '2s', blockMs: '5s' },
    ];
    const service = { kind: 'uniform', minMs: 500, maxMs: '3s', seed: 1 } as const;
    const { status, json } = await post({
      policies,
      pattern: { kind: 'random', meanRatePerSecond: 1, durationMs: '40s', seed: 1 },
      service,
    });
    assert.equal(status, 200);
    const expected = simulate({ policies, arrivals: random(1, 40_000, 1), service });
    assert.deepEqual(json, JSON.parse(JSON.stringify(expected)));
    // The figures the page draws: slots held against max, and the lockouts.
    const [concurrent, locked] = expected.policies;
    assert.equal(concurrent?.summary.maxInFlight, 2);
    assert.ok((concurrent?.releases.length ?? 0) > 0);
    assert.ok((locked?.blockedPeriods.length ?? 0) > 0);
    assert.ok((locked?.summary.rejectedByLockout ?? 0) > 0);
  });

  it('answers a bad concurrency or lockout scenario with 400 naming the field', async () => {
    const concurrent = { kind: 'concurrency', max: 2, leaseMs: '30s' };
    const cases: [unknown, string, string][] = [
      [
        { policies: [concurrent], arrivals: [0] },
        'service',
        '`service` is required to simulate a concurrency policy',
      ],
      [
        { policies: [concurrent], arrivals: [0], service: { kind: 'fixed', durationMs: 'long' } },
        'durationMs',
        'service: `durationMs` must be a positive whole number',
      ],
      [
        { policies: [concurrent], arrivals: [0], service: { kind: 'uniform', minMs: 5, maxMs: 1, seed: 0 } },
        'maxMs',
        'service: `maxMs` must not be below `minMs`',
      ],
      [
        {
          policies: [{ ...concurrent, max: 'two' }],
          arrivals: [0],
          service: { kind: 'fixed', durationMs: 1 },
        },
        'max',
        'policy 1: `max` must be a non-negative integer',
      ],
      [
        { policies: [POLICIES[0], { ...POLICIES[1], blockMs: '-5s' }], arrivals: [0] },
        'blockMs',
        'policy 2: `blockMs` must be a positive whole number',
      ],
    ];
    for (const [body, option, message] of cases) {
      const { status, json } = await post(body);
      assert.equal(status, 400, JSON.stringify(json));
      assert.equal(json.code, 'ERR_TOLLGATE_CONFIG');
      assert.equal(json.option, option);
      assert.ok(String(json.error).startsWith(message), String(json.error));
    }
  });

  it('answers a bad policy spec with 400 and the library message, code and option', async () => {
    const { status, json } = await post({
      policies: [POLICIES[0], { kind: 'token-bucket', capacity: -2, refillPerSecond: 1 }],
      arrivals: [0],
    });
    assert.equal(status, 400);
    assert.deepEqual(json, {
      error: pointed('policy 2: `capacity` must be a non-negative integer (received -2)'),
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'capacity',
    });
  });

  it('answers unusable scenarios with 400', async () => {
    const cases: [unknown, RegExp][] = [
      [
        { policies: POLICIES, pattern: { kind: 'steady', ratePerSecond: 0, durationMs: 1000 } },
        /ratePerSecond/,
      ],
      [{ policies: POLICIES, arrivals: [5, 1] }, /ascending/],
      [{ policies: POLICIES }, /exactly one of `pattern` and `arrivals`/],
      [{ policies: POLICIES, arrivals: [0], pattern: { kind: 'steady' } }, /exactly one/],
      [{ policies: [...POLICIES, POLICIES[0]], arrivals: [0] }, /at most 4 policies/],
      [{ policies: [], arrivals: [0] }, /non-empty array/],
      [
        { policies: POLICIES, arrivals: new Array(MAX_SIMULATED_ARRIVALS + 1).fill(0) },
        /at most 20000 arrivals/,
      ],
      [
        { policies: POLICIES, pattern: { kind: 'steady', ratePerSecond: 1000, durationMs: '1h' } },
        /more than 20000 arrivals/,
      ],
      [[1, 2], /JSON object/],
      ['{"policies": [', /the request body was refused/],
    ];
    for (const [body, message] of cases) {
      const { status, json } = await post(body);
      assert.equal(status, 400, JSON.stringify(json));
      assert.match(String(json.error), message);
      assert.match(String(json.code), /^ERR_TOLLGATE_(CONFIG|ARGUMENT)$/);
    }
  });

  it('refuses, before running it, a scenario whose work is above the cap, naming the cap', async () => {
    // Four sliding window logs at their largest limit: this once held the event loop for seconds.
    const { status, json } = await post(churningLogs(10_000));
    assert.equal(status, 400);
    assert.equal(json.code, 'ERR_TOLLGATE_ARGUMENT');
    assert.equal(json.option, null);
    assert.match(String(json.error), new RegExp(`^at most ${MAX_SIMULATION_WORK} units of work `));
  });

  it('answers the heaviest scenario the cap admits, with exactly what simulate() computes', async () => {
    let limit = 1;
    while (simulationWork(churningLogs(limit + 1)) <= MAX_SIMULATION_WORK) limit++;
    assert.equal((await post(churningLogs(limit + 1))).status, 400);
    const input = churningLogs(limit);
    const { status, json } = await post(input);
    assert.equal(status, 200, JSON.stringify(json).slice(0, 500));
    const summaries = (json.policies as { summary: { admitted: number } }[]).map((p) => p.summary.admitted);
    assert.deepEqual(summaries, [20_000, 20_000, 20_000, 20_000]);
    assert.deepEqual(json, JSON.parse(JSON.stringify(simulate(input))));
  });

  it('admits every scenario of the page at its defaults well inside the cap', () => {
    const window = (kind: 'fixed-window' | 'sliding-window' | 'sliding-window-counter') =>
      ({ kind, limit: 5, windowMs: '10s' }) as const;
    const policies: PolicySpec[] = [
      window('fixed-window'),
      window('sliding-window'),
      window('sliding-window-counter'),
      { kind: 'token-bucket', capacity: 5, refillPerSecond: 1 },
    ];
    // A concurrency limit and a lockout at the page's defaults, with its default request duration.
    const shaping: LimiterSpec[] = [
      { kind: 'concurrency', max: 2, leaseMs: '30s', blockMs: '10s' },
      { ...window('fixed-window'), blockMs: '10s' },
      { kind: 'token-bucket', capacity: 5, refillPerSecond: 1, blockMs: '10s' },
      { ...window('sliding-window'), blockMs: '10s' },
    ];
    const service = { kind: 'uniform', minMs: 500, maxMs: '3s', seed: 1 } as const;
    for (const arrivals of [boundaryBurst(5, '10s'), random(1, '40s', 1), [0, 100, 200, 9900, 10_000]]) {
      assert.ok(simulationWork({ policies, arrivals }) < MAX_SIMULATION_WORK / 1000);
      assert.ok(simulationWork({ policies: shaping, arrivals, service }) < 30_000);
    }
  });

  it('is not counted by the demo /api aggregate limiter', async () => {
    const response = await fetch(`${base}/api/simulate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ policies: POLICIES.slice(0, 1), arrivals: [0] }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('RateLimit-Limit'), null);
    // Every earlier test posted here from this IP; /api/cheap is the aggregate's first count of it.
    const cheap = await fetch(`${base}/api/cheap`);
    assert.equal(cheap.headers.get('RateLimit-Limit'), '300');
    assert.equal(cheap.headers.get('RateLimit-Remaining'), '299');
  });

  it('serves every file of the page table, each with its type', async () => {
    for (const [path, page] of PAGE_FILES) {
      const response = await fetch(`${base}${path}`);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), page.type, path);
      assert.ok((await response.text()).length > 100, path);
    }
  });
});
