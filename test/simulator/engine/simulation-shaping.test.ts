// simulate() with a concurrency limit and a lockout: slots never over max, blocks and releases as the limiter makes them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../../src/decision/decision.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import { concurrency } from '../../../src/policies/concurrency.js';
import { fixedWindow } from '../../../src/policies/fixed-window.js';
import type { AnyPolicy } from '../../../src/policies/policy.js';
import { tokenBucket } from '../../../src/policies/token-bucket.js';
import {
  type LimiterSpec,
  random,
  type ServiceSpec,
  type SimulationInput,
  simulate,
  steady,
} from '../../../src/simulator/engine/index.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';

/** The most requests really in service at once: each admitted one from its arrival until its service time ends. */
function mostInService(
  arrivals: readonly number[],
  serviceMs: readonly number[],
  allowed: readonly boolean[],
) {
  const spans = arrivals.flatMap((t, i) => (allowed[i] ? [[t, t + (serviceMs[i] as number)] as const] : []));
  return Math.max(0, ...spans.map(([t]) => spans.filter(([from, until]) => from <= t && t < until).length));
}

const UNIFORM: ServiceSpec = { kind: 'uniform', minMs: 200, maxMs: '2s', seed: 3 };

describe('simulate with a concurrency limit', () => {
  it('never has more than max requests in service when leases outlast them, and reaches max', () => {
    const arrivals = random(6, 30_000, 11);
    const input: SimulationInput = {
      policies: [{ kind: 'concurrency', max: 4, leaseMs: '5s' }],
      arrivals,
      service: UNIFORM,
    };
    const simulation = simulate(input);
    const run = simulation.policies[0] ?? assert.fail();
    const serviceMs = simulation.serviceMs ?? assert.fail();
    assert.equal(serviceMs.length, arrivals.length);
    assert.ok(serviceMs.every((ms) => Number.isInteger(ms) && ms >= 200 && ms <= 2000));
    const allowed = run.timeline.map((e) => e.allowed);
    assert.equal(mostInService(arrivals, serviceMs, allowed), 4);
    assert.equal(run.summary.maxInFlight, 4);
    assert.equal(run.summary.leaseExpiries, 0);
    assert.ok(run.summary.rejected > 0, 'the traffic exercises rejections');
    assert.equal(run.level, 'in-flight');
    assert.deepEqual(run.policy, {
      kind: 'concurrency',
      name: 'concurrency',
      limit: 4,
      windowMs: 0,
      leaseMs: 5000,
    });
    // Every admitted request is released, the level never goes over max, and it ends at 0.
    assert.equal(run.releases.length, run.summary.admitted);
    for (const { level } of [...run.timeline, ...run.releases, ...run.levels])
      assert.ok(level >= 0 && level <= 4);
    assert.equal(run.levels.at(-1)?.level, 0);
    assert.ok(
      (run.levels.at(-1)?.timeMs ?? 0) >= Math.max(...arrivals.map((t, i) => t + (serviceMs[i] ?? 0))),
    );
  });

  it('frees a slot when its request finishes: the next arrival then, not before, gets it', () => {
    const run =
      simulate({
        policies: [{ kind: 'concurrency', max: 2, leaseMs: '1m' }],
        arrivals: [0, 100, 999, 1000, 1050, 1500],
        service: { kind: 'fixed', durationMs: '1s' },
      }).policies[0] ?? assert.fail();
    assert.deepEqual(
      run.timeline.map((e) => [e.timeMs, e.allowed, e.level, e.retryAfterMs]),
      [
        [0, true, 1, 0],
        [100, true, 2, 0],
        // Told to retry in 1 s (the policy's hint), not at the first lease's end: a release comes sooner.
        [999, false, 2, 1000],
        [1000, true, 2, 0],
        [1050, false, 2, 1000],
        // The slot freed at 1100.
        [1500, true, 2, 0],
      ],
    );
    // The slots held right after each release: the one at 1000 comes before the arrival then.
    assert.deepEqual(run.releases, [
      { timeMs: 1000, level: 1 },
      { timeMs: 1100, level: 1 },
      { timeMs: 2000, level: 1 },
      { timeMs: 2500, level: 0 },
    ]);
  });

  it('lets more requests run than max when they outlive their leases, and counts them', () => {
    const arrivals = steady(2, 20_000);
    const { policies, serviceMs } = simulate({
      policies: [{ kind: 'concurrency', max: 2, leaseMs: 1000 }],
      arrivals,
      service: { kind: 'fixed', durationMs: '3s' },
    });
    const run = policies[0] ?? assert.fail();
    const allowed = run.timeline.map((e) => e.allowed);
    // The policy counts 2 slots at most, but a slot freed by its lease lets a third request start.
    assert.equal(run.summary.maxInFlight, 2);
    assert.ok(mostInService(arrivals, serviceMs ?? [], allowed) > 2);
    assert.equal(run.summary.leaseExpiries, run.summary.admitted);
    assert.ok(run.releases.every((r) => r.leaseExpired === true));
  });

  it('gives other policies no leases and no releases, and leaves their figures as they were', () => {
    const input = {
      policies: [{ kind: 'fixed-window', limit: 3, windowMs: '2s' }] as const,
      arrivals: steady(4, 6000),
    };
    const plain = simulate(input);
    assert.deepEqual(simulate({ ...input, service: UNIFORM }).policies, plain.policies);
    assert.deepEqual(plain.policies[0]?.releases, []);
    assert.equal(plain.policies[0]?.summary.maxInFlight, undefined);
  });
});

describe('simulate with a lockout', () => {
  it('denies everything for blockMs after a denial, then lets requests through', () => {
    // 3 per second, 10 arrivals a second: the 4th of each window is denied, and with it the next 5 s.
    const arrivals = steady(10, 20_000);
    const run =
      simulate({
        policies: [{ kind: 'fixed-window', limit: 3, windowMs: '1s', blockMs: '5s' }],
        arrivals,
      }).policies[0] ?? assert.fail();
    assert.equal(run.blockMs, 5000);
    const at = (t: number) => run.timeline.find((e) => e.timeMs === t) ?? assert.fail(`no arrival at ${t}`);
    assert.deepEqual(
      [0, 100, 200].map((t) => at(t).allowed),
      [true, true, true],
    );
    assert.deepEqual(at(300), {
      timeMs: 300,
      allowed: false,
      remaining: 0,
      // The window would have let it through at 1 s; the block holds it 5 s.
      retryAfterMs: 5000,
      level: 3,
      deniedBy: 'policy',
    });
    assert.deepEqual(run.blockedPeriods[0], { fromMs: 300, untilMs: 5300 });
    // Locked out: every arrival until 5.3 s is denied, even once the window has room again.
    for (const e of run.timeline.filter((e) => e.timeMs > 300 && e.timeMs < 5300)) {
      assert.equal(e.allowed, false, `${e.timeMs}`);
      assert.equal(e.deniedBy, 'lockout', `${e.timeMs}`);
      assert.equal(e.retryAfterMs, 5300 - e.timeMs, `${e.timeMs}`);
    }
    assert.equal(at(1000).level, 0, 'the window itself has rolled over');
    // Then the window admits again: a fresh one opens at 5.3 s, and its 4th request starts the next block.
    assert.deepEqual(
      [5300, 5400, 5500, 5600].map((t) => at(t).allowed),
      [true, true, true, false],
    );
    assert.deepEqual(run.blockedPeriods[1], { fromMs: 5600, untilMs: 10_600 });
    const { summary } = run;
    assert.equal(summary.rejectedByLockout, run.timeline.filter((e) => e.deniedBy === 'lockout').length);
    assert.equal(summary.rejected - (summary.rejectedByLockout ?? 0), run.blockedPeriods.length);
    assert.equal(summary.admitted, 3 * run.blockedPeriods.length);
  });

  it('blockMs 0 starts no block: the policy alone decides', () => {
    const input = {
      policies: [{ kind: 'fixed-window', limit: 3, windowMs: '1s' }] as LimiterSpec[],
      arrivals: steady(10, 5000),
    };
    const plain = simulate(input).policies[0] ?? assert.fail();
    const zero =
      simulate({ ...input, policies: [{ ...input.policies[0], blockMs: 0 } as LimiterSpec] }).policies[0] ??
      assert.fail();
    assert.deepEqual(zero.timeline, plain.timeline);
    assert.deepEqual(zero.blockedPeriods, []);
    assert.equal(zero.summary.rejectedByLockout, 0);
  });
});

describe('simulate agrees with the limiter', () => {
  /** The limiter on a memory store at a clock moved to each event: the same events in the simulation's order. */
  async function limiterRun(
    policy: AnyPolicy,
    blockMs: number | undefined,
    arrivals: number[],
    serviceMs: number[],
  ) {
    const base = 1_700_000_000_000;
    let now = base;
    const store = new MemoryStore({ clock: () => now });
    const limiter = createLimiter({ policy, store, ...(blockMs === undefined ? {} : { blockMs }) });
    const events = [
      ...arrivals.map((t, i) => ({ t, order: 1, i })),
      ...arrivals.map((t, i) => ({ t: t + (serviceMs[i] ?? 0), order: 0, i })),
    ].sort((a, b) => a.t - b.t || a.order - b.order || a.i - b.i);
    const decisions: Decision[] = [];
    for (const { t, order, i } of events) {
      now = base + t;
      if (order === 1) decisions[i] = await limiter.consume('client');
      else await decisions[i]?.release?.();
    }
    store.close();
    return decisions.map((d) => ({
      allowed: d.allowed,
      remaining: d.remaining,
      retryAfterMs: d.allowed ? 0 : (d.retryAfterMs ?? -1),
    }));
  }

  it('decides every request as createLimiter on a memory store does, releases and blocks included', async () => {
    const arrivals = random(8, 20_000, 5);
    const service: ServiceSpec = { kind: 'uniform', minMs: 100, maxMs: 1500, seed: 9 };
    const cases: [LimiterSpec, AnyPolicy, number | undefined][] = [
      [{ kind: 'concurrency', max: 3, leaseMs: '4s' }, concurrency({ max: 3, leaseMs: 4000 }), undefined],
      [
        { kind: 'concurrency', max: 3, leaseMs: 800, blockMs: 700 },
        concurrency({ max: 3, leaseMs: 800 }),
        700,
      ],
      [
        { kind: 'token-bucket', capacity: 5, refillPerSecond: 4, blockMs: '1s' },
        tokenBucket({ capacity: 5, refillPerSecond: 4 }),
        1000,
      ],
      [
        { kind: 'fixed-window', limit: 6, windowMs: 1000, blockMs: 0 },
        fixedWindow({ limit: 6, windowMs: 1000 }),
        0,
      ],
    ];
    const simulation = simulate({ policies: cases.map(([spec]) => spec), arrivals, service });
    for (const [i, [spec, policy, blockMs]] of cases.entries()) {
      const ours = simulation.policies[i] ?? assert.fail();
      const theirs = await limiterRun(policy, blockMs, arrivals, [...(simulation.serviceMs ?? [])]);
      assert.deepEqual(
        ours.timeline.map(({ allowed, remaining, retryAfterMs }) => ({ allowed, remaining, retryAfterMs })),
        theirs,
        JSON.stringify(spec),
      );
      assert.ok(ours.summary.rejected > 0, `${JSON.stringify(spec)}: the traffic exercises rejections`);
      if (blockMs)
        assert.ok((ours.summary.rejectedByLockout ?? 0) > 0, `${JSON.stringify(spec)}: and blocks`);
    }
  });
});
