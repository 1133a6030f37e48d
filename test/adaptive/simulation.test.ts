// The adaptive limits simulated against a service of known capacity: the model itself, the default algorithm's
// targets, a tuned algorithm that meets them, and the fixed limits that show the simulation can tell.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { adaptiveConcurrency } from '../../src/adaptive/adaptive-concurrency.js';
import { markdownReport } from '../../src/adaptive/simulation/report.js';
import type { Contender, Scenario } from '../../src/adaptive/simulation/run-simulation.js';
import {
  contenders,
  LATENCY_STEP,
  OVERLOAD_BURST,
  OVERLOAD_STEP,
} from '../../src/adaptive/simulation/scenarios.js';
import {
  capacityPerSecond,
  DEFAULT_SERVICE,
  type Job,
  Service,
  unloadedP99Ms,
} from '../../src/adaptive/simulation/service-model.js';
import {
  type ContenderResult,
  type ScenarioResult,
  simulateScenario,
} from '../../src/adaptive/simulation/simulate-scenario.js';
import { arrivals } from '../../src/adaptive/simulation/traffic.js';
import { simulatorHandler } from '../../src/simulator/server/simulator-handler.js';

const [DEFAULT, VEGAS, GRADIENT2, , ENVOY, TOO_LOW, TOO_HIGH] = contenders(DEFAULT_SERVICE) as [
  Contender,
  Contender,
  Contender,
  Contender,
  Contender,
  Contender,
  Contender,
];

/** The bound on the p99: twice the p99 of the service time alone. */
const P99_BOUND_MS = 2 * unloadedP99Ms(DEFAULT_SERVICE);
/** Goodput at 90% of the service's capacity, at least, through the overload. */
const GOODPUT_FLOOR = 0.9;
/** The limit back within 10% of where it settled before the service slowed, this long after it recovered. */
const RECOVERY_MS = 10_000;

/** Each scenario is simulated once per set of contenders, however many tests read it. */
const cache = new Map<string, ScenarioResult>();
function simulated(scenario: Scenario, compared: readonly Contender[]): ScenarioResult {
  const key = `${scenario.name}:${compared.map(({ label }) => label).join(',')}`;
  const result = cache.get(key) ?? simulateScenario(scenario, compared);
  cache.set(key, result);
  return result;
}

function contender(result: ScenarioResult, label: string): ContenderResult {
  const found = result.contenders.find((run) => run.label === label);
  assert.ok(found !== undefined, `${label} ran`);
  return found;
}

/** The overload step's 200% phase for `compared`: the phase both parts of the first target are read in. */
function overloaded(compared: Contender) {
  const phase = contender(simulated(OVERLOAD_STEP, [compared]), compared.label).phases[2];
  assert.equal(phase?.label, '200%');
  return phase;
}

describe('the simulated service', () => {
  it('has the capacity of its workers at their mean service time, and the unloaded p99 of its spread', () => {
    assert.equal(capacityPerSecond(DEFAULT_SERVICE), 400);
    // 50 ms mean at sigma 0.3: median 47.8 ms, p99 twice that.
    assert.ok(Math.abs(unloadedP99Ms(DEFAULT_SERVICE) - 96.1) < 0.05, String(unloadedP99Ms(DEFAULT_SERVICE)));
  });

  it('draws Poisson arrivals at each phase rate, the same for the same seed', () => {
    const phases = [
      { label: 'a', durationMs: 10_000, loadPercent: 50 },
      { label: 'b', durationMs: 10_000, loadPercent: 200 },
    ];
    const drawn = arrivals(phases, DEFAULT_SERVICE, 7);
    const first = drawn.atMs.filter((at) => at < 10_000).length;
    // 2,000 and 8,000 expected; a Poisson count's standard deviation is its square root (45 and 89).
    assert.ok(Math.abs(first - 2000) < 150, String(first));
    assert.ok(Math.abs(drawn.atMs.length - first - 8000) < 300, String(drawn.atMs.length - first));
    assert.deepEqual(arrivals(phases, DEFAULT_SERVICE, 7), drawn);
  });

  it('queues what its workers cannot take, first come first served, skipping the jobs given up on', () => {
    const service = new Service<Job & { name: string }>(1);
    const job = (name: string) => ({ name, workMs: 1, abandoned: false });
    const [a, b, c] = [job('a'), job('b'), job('c')];
    assert.equal(service.enter(a), true);
    assert.equal(service.enter(b), false);
    assert.equal(service.enter(c), false);
    b.abandoned = true;
    assert.equal(service.finish(), c);
    assert.equal(service.finish(), undefined);
    assert.equal(service.queued, 0);
  });

  it('gives the same figures on every run', () => {
    const compared = contenders(DEFAULT_SERVICE).slice(0, 4);
    assert.deepEqual(simulateScenario(OVERLOAD_BURST, compared), simulateScenario(OVERLOAD_BURST, compared));
  });
});

describe('the default algorithm against the targets', () => {
  it("is Envoy's gradient, capped to demand and re-measuring its minimum, on the limit's clock", () => {
    const ticks: number[] = [];
    const limit = adaptiveConcurrency({ clock: () => ticks.push(0) });
    assert.equal(limit.algorithm.name, 'gradient');
    assert.ok(ticks.length > 0, "the default algorithm reads the limit's clock");
  });

  it('holds the p99 within twice the unloaded p99 and the goodput at 90% of capacity through the overload', () => {
    const { p99Ms, goodputShare } = overloaded(DEFAULT);
    assert.ok(p99Ms !== null && p99Ms <= P99_BOUND_MS, `p99 ${p99Ms} ms against ${P99_BOUND_MS} ms`);
    assert.ok(goodputShare >= GOODPUT_FLOOR, `goodput ${goodputShare} of capacity`);
  });

  it('holds both through a burst of five times the capacity', () => {
    const burst = contender(simulated(OVERLOAD_BURST, [DEFAULT]), DEFAULT.label).phases[1];
    assert.equal(burst?.label, '500% burst');
    assert.ok(burst.p99Ms !== null && burst.p99Ms <= P99_BOUND_MS, `p99 ${burst.p99Ms} ms`);
    assert.ok(burst.goodputShare >= GOODPUT_FLOOR, `goodput ${burst.goodputShare} of capacity`);
  });

  it('lowers its limit while the service is slow, and is back within 10% of it within 10 s of the recovery', () => {
    const run = contender(simulated(LATENCY_STEP, [DEFAULT]), DEFAULT.label);
    const [before, slow, after] = run.phases;
    assert.ok((slow?.settledLimit ?? 0) < (before?.settledLimit ?? 0), 'a lower limit while slow');
    assert.ok(
      run.recoveryMs !== null && run.recoveryMs !== undefined && run.recoveryMs <= RECOVERY_MS,
      `${run.recoveryMs} ms`,
    );
    assert.ok((after?.goodputShare ?? 0) >= GOODPUT_FLOOR, `goodput ${after?.goodputShare} after`);
  });
});

describe('the reference algorithms at their defaults, which the simulation tells apart', () => {
  it("Envoy's own queues on entering the overload from a limit raised far above the demand", () => {
    const { p99Ms } = overloaded(ENVOY);
    assert.ok(p99Ms !== null && p99Ms > P99_BOUND_MS, `p99 ${p99Ms} ms`);
  });

  it('Gradient2 creeps up under the overload, past the p99 bound', () => {
    const { p99Ms, goodputShare } = overloaded(GRADIENT2);
    assert.ok(p99Ms !== null && p99Ms > P99_BOUND_MS, `p99 ${p99Ms} ms`);
    assert.ok(goodputShare >= GOODPUT_FLOOR, `goodput ${goodputShare}`);
  });

  it("Vegas reads the service time's spread as a queue and idles workers", () => {
    const { p99Ms, goodputShare } = overloaded(VEGAS);
    assert.ok(p99Ms !== null && p99Ms <= P99_BOUND_MS, `p99 ${p99Ms} ms`);
    assert.ok(goodputShare < GOODPUT_FLOOR, `goodput ${goodputShare}`);
  });
});

describe('fixed limits, which the simulation must tell apart', () => {
  it('lets the p99 through the bound with a limit of ten times the workers', () => {
    const { p99Ms, goodputShare } = overloaded(TOO_HIGH);
    assert.ok(p99Ms !== null && p99Ms > 2 * P99_BOUND_MS, `p99 ${p99Ms} ms`);
    assert.ok(goodputShare >= GOODPUT_FLOOR, 'a long queue still keeps every worker busy');
  });

  it('loses half the goodput with a limit of half the workers', () => {
    const { p99Ms, goodputShare } = overloaded(TOO_LOW);
    assert.ok(goodputShare < 0.55, `goodput ${goodputShare} of capacity`);
    assert.ok(p99Ms !== null && p99Ms <= P99_BOUND_MS, 'nothing queues');
  });
});

describe('the markdown report', () => {
  it('has a row per limit and phase under a heading per scenario', () => {
    const report = markdownReport([simulated(OVERLOAD_STEP, [TOO_LOW, TOO_HIGH])]);
    assert.match(report, /^### Load 50% → 90% → 200% → 100% of capacity, 20 s each$/m);
    assert.match(report, /capacity 400 req\/s, unloaded p99 96 ms \(bound: 192 ms\)/);
    assert.match(report, /^\| fixed 10 \(too low\) \| 50% \| \d+ \(\d+%\) \|/m);
    assert.equal(report.split('\n').filter((line) => /^\| [^-]/.test(line)).length, 1 + 2 * 4);
  });
});

describe("the simulator page's routes", () => {
  it('lists the scenarios and answers POST /api/adaptive with their results, refusing unknown ones', async () => {
    const server = createServer(simulatorHandler());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = (body: string) =>
      fetch(`${base}/api/adaptive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    try {
      const menu = await (await fetch(`${base}/api/adaptive/scenarios`)).json();
      assert.deepEqual(
        menu.map(({ name }: { name: string }) => name),
        ['overload-step', 'latency-step', 'overload-burst'],
      );
      const unknown = await post('{"scenario":"nope"}');
      assert.equal(unknown.status, 400);
      assert.equal((await unknown.json()).option, 'scenario');
      assert.equal((await post('not json')).status, 400);
      const answer = await post('{"scenario":"overload-burst"}');
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), JSON.parse(JSON.stringify(simulateScenario(OVERLOAD_BURST))));
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });
});
