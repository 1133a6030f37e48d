// Shared concurrency-limit suite: processes on their own connections never hold more than `max` slots at once, a
// killed process's slots come back when their leases expire on the server's clock, and a denial spends nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Decision, Limiter } from '../../src/index.js';
import type { RedisStore } from '../../src/stores/redis/index.js';
import { signalChild } from '../harness/redis-server.js';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process.js';
import { denialSpendsNothing } from './concurrency-limit-denial.js';
import {
  type HammerTally,
  type Held,
  type LimitCase,
  type LimitWorkerConfig,
  limiterFor,
  openLimitStore,
  type Plant,
} from './concurrency-limit-worker.js';
import type { StoreTarget } from './concurrency-worker.js';

const WORKER = fileURLToPath(new URL('./concurrency-limit-worker.ts', import.meta.url));
const WORKERS = 4;
const MAX = 3;
/** Far longer than any hold: in the hammer, only releases free slots. */
const HAMMER_LEASE_MS = 10_000;
/** Per process and identifier: 12 requests in flight against 3 slots, 100 admissions in all. */
const LANES = 3;
const ADMISSIONS = 25;
const MAX_HOLD_MS = 10;
const BURST = 10_000;
/** The killed process holds 2 slots taken 100 ms apart, each on a lease of 3 s: room for a loaded CI box to stall. */
const KILL_MAX = 2;
const KILL_LEASE_MS = 3000;
const GAP_MS = 100;
/** Generous bounds for a loaded machine; a passing run takes a fraction of them. */
const RUN_BOUND_MS = 12_000;

export interface LimitFixture {
  readonly target: StoreTarget;
  /** Identifiers for `limiter`, spread over every shard of the target. */
  identifiers(limiter: Limiter, stem: string): Promise<string[]>;
  close(): Promise<void>;
}

/** One identifier's tallies summed over the processes, and what the store holds once they are done. */
export interface HammerTotal extends HammerTally {
  readonly scope: string;
  readonly id: string;
  readonly burst: number | undefined;
  /** After the run, from a peek of cost 0: slots free, and the bucket's tokens when there is one. */
  readonly slotsFree: number;
  readonly burstLeft: number | undefined;
}

/** Two limiters, one with a bucket in front of its slots, each on identifiers spread over the target. */
async function limitCases(
  fixture: LimitFixture,
  store: RedisStore,
  max: number,
  leaseMs: number,
  burst: number,
) {
  const run = randomUUID().slice(0, 8);
  const specs: LimitCase[] = [
    { scope: `slots-${run}`, ids: [] },
    { scope: `paired-${run}`, burst, ids: [] },
  ];
  return Promise.all(
    specs.map(async (spec) => {
      const limiter = limiterFor(spec, max, leaseMs, store);
      return { spec: { ...spec, ids: await fixture.identifiers(limiter, 'user') }, limiter };
    }),
  );
}

/**
 * WORKERS processes hammer both limiters at once; each counts the holders on a shared counter. Returns each
 * identifier's totals; the caller judges them (a planted engine is expected to fail).
 */
export async function hammer(fixture: LimitFixture, plant?: Plant): Promise<HammerTotal[]> {
  const keyPrefix = `tgc-${randomUUID().slice(0, 8)}:`;
  const { store, close } = await openLimitStore(fixture.target, keyPrefix);
  const children: WorkerProcess[] = [];
  try {
    const cases = await limitCases(fixture, store, MAX, HAMMER_LEASE_MS, BURST);
    const config: LimitWorkerConfig = {
      mode: 'hammer',
      target: fixture.target,
      keyPrefix,
      max: MAX,
      leaseMs: HAMMER_LEASE_MS,
      cases: cases.map(({ spec }) => spec),
      lanes: LANES,
      admissions: ADMISSIONS,
      maxHoldMs: MAX_HOLD_MS,
      deadline: Date.now() + RUN_BOUND_MS,
      ...(plant === undefined ? {} : { plant }),
    };
    const workers = Array.from({ length: WORKERS }, () =>
      spawnWorker(WORKER, config, (child) => children.push(child)),
    );
    for (const worker of workers) assert.equal(await worker.nextLine(), 'ready');
    for (const worker of workers) worker.child.stdin.end('go\n');
    const summaries = await Promise.all(workers.map(async (worker) => JSON.parse(await worker.nextLine())));
    assert.deepEqual(await Promise.all(workers.map((worker) => worker.closed)), Array(WORKERS).fill(0));
    const perWorker = summaries as Record<string, Record<string, HammerTally>>[];
    const totals: HammerTotal[] = [];
    for (const { spec, limiter } of cases) {
      for (const id of spec.ids) {
        const tallies = perWorker.map((summary) => summary[spec.scope]?.[id] as HammerTally);
        const after = await limiter.peek(id, { cost: 0 });
        totals.push({
          scope: spec.scope,
          id,
          burst: spec.burst,
          admitted: sum(tallies.map((t) => t.admitted)),
          denied: sum(tallies.map((t) => t.denied)),
          degraded: sum(tallies.map((t) => t.degraded)),
          peak: Math.max(...tallies.map((t) => t.peak)),
          minRetryMs: Math.min(...tallies.map((t) => t.minRetryMs)),
          maxRetryMs: Math.max(...tallies.map((t) => t.maxRetryMs)),
          slotsFree: (after.policies.at(-1) as Decision['policies'][number]).remaining,
          burstLeft: spec.burst === undefined ? undefined : after.policies[0]?.remaining,
        });
      }
    }
    return totals;
  } finally {
    // Only after a failure can a worker still be running.
    for (const child of children) signalChild(child, 'SIGKILL');
    await close();
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/**
 * Takes back a dead process's slots one by one. Each decision is judged on the server's clock alone: admitted
 * exactly when the earliest dead lease still counted has expired, and a denial names that expiry as its retry (or
 * the policy's retry hint, when that comes first).
 */
async function reclaim(limiter: Limiter, id: string, taken: readonly number[]): Promise<number> {
  const expiries = taken.map((at) => at + KILL_LEASE_MS).sort((a, b) => a - b);
  const deadline = Date.now() + RUN_BOUND_MS;
  const mine: Decision[] = [];
  let denials = 0;
  // The state's retry is a lease's expiry; a decision advises it, or the policy's hint when that comes sooner.
  const hint =
    limiter.policies.find((p) => p.retryHintMs !== undefined)?.retryHintMs ?? Number.POSITIVE_INFINITY;
  for (const expiry of expiries) {
    for (;;) {
      const decision = await limiter.consume(id);
      assert.equal(decision.degraded, undefined, id);
      if (decision.allowed) {
        assert.ok(decision.nowMs >= expiry, `${id}: admitted at ${decision.nowMs}, before ${expiry}`);
        mine.push(decision);
        break;
      }
      assert.ok(decision.nowMs < expiry, `${id}: denied at ${decision.nowMs}, after the lease expired`);
      assert.equal(
        decision.retryAfterMs,
        Math.min(expiry - decision.nowMs, hint),
        `${id}: the retry is the dead lease's expiry, or the hint`,
      );
      denials++;
      assert.ok(Date.now() < deadline, `${id}: still denied ${RUN_BOUND_MS} ms later`);
      await sleep(15);
    }
  }
  // Every slot is this process's now: a newcomer waits for the first of its own leases, until it releases them.
  const ownExpiry = (mine[0] as Decision).nowMs + KILL_LEASE_MS;
  const full = await limiter.consume(id);
  assert.equal(full.allowed, full.nowMs >= ownExpiry, id);
  if (full.allowed) mine.push(full);
  else assert.equal(full.retryAfterMs, Math.min(ownExpiry - full.nowMs, hint), id);
  await Promise.all(mine.map((decision) => decision.release?.()));
  assert.equal((await limiter.peek(id, { cost: 0 })).policies.at(-1)?.remaining, KILL_MAX, id);
  return denials;
}

export function runConcurrencyLimit(name: string, makeFixture: () => Promise<LimitFixture>): void {
  describe(`concurrency limit across ${WORKERS} processes on ${name}`, () => {
    let fixture: LimitFixture | undefined;
    after(async () => fixture?.close());

    it(`never lets more than ${MAX} hold a slot at once, and fills every slot`, async (t) => {
      fixture ??= await makeFixture();
      for (const total of await hammer(fixture)) {
        const label = `${total.scope}/${total.id}`;
        t.diagnostic(`${label}: ${total.admitted} admitted, ${total.denied} denied, peak ${total.peak}`);
        assert.equal(total.degraded, 0, `${label}: decisions fell back to the fail mode`);
        assert.equal(total.peak, MAX, `${label}: most holders at once`);
        assert.ok(total.admitted >= WORKERS * ADMISSIONS, label);
        assert.ok(total.denied > 0, `${label}: the slots were contended`);
        assert.ok(
          total.minRetryMs > 0 && total.maxRetryMs <= HAMMER_LEASE_MS,
          `${label}: retry within a lease`,
        );
        assert.equal(total.slotsFree, MAX, `${label}: every slot released`);
        // The bucket lost exactly one token per admission: the denials spent none.
        if (total.burst !== undefined) assert.equal(total.burstLeft, total.burst - total.admitted, label);
      }
    });

    it("gives a killed process's slots back when their leases expire on the server's clock", async () => {
      fixture ??= await makeFixture();
      const keyPrefix = `tgc-${randomUUID().slice(0, 8)}:`;
      const { store, close } = await openLimitStore(fixture.target, keyPrefix);
      const children: WorkerProcess[] = [];
      try {
        const cases = await limitCases(fixture, store, KILL_MAX, KILL_LEASE_MS, 100);
        const holder = spawnWorker(
          WORKER,
          {
            mode: 'hold',
            target: fixture.target,
            keyPrefix,
            max: KILL_MAX,
            leaseMs: KILL_LEASE_MS,
            cases: cases.map(({ spec }) => spec),
            gapMs: GAP_MS,
          } satisfies LimitWorkerConfig,
          (child) => children.push(child),
        );
        const held = JSON.parse(await holder.nextLine()) as Held;
        signalChild(holder.child, 'SIGKILL');
        await holder.closed;
        assert.equal(holder.child.signalCode, 'SIGKILL');
        await Promise.all(
          cases.flatMap(({ spec, limiter }) =>
            spec.ids.map(async (id) => {
              const denials = await reclaim(limiter, id, held[spec.scope]?.[id] ?? []);
              assert.ok(denials > 0, `${spec.scope}/${id}: denied while the dead leases lived`);
            }),
          ),
        );
      } finally {
        for (const child of children) signalChild(child, 'SIGKILL');
        await close();
      }
    });

    it('spends neither burst nor slots on a request the daily quota denies', async () => {
      fixture ??= await makeFixture();
      const current = fixture;
      // Every denial is the script's own, not one remembered locally.
      const { store, close } = await openLimitStore(current.target, `tgc-${randomUUID().slice(0, 8)}:`, {
        localDenyCache: 0,
      });
      try {
        await denialSpendsNothing(store, (limiter) => current.identifiers(limiter, 'daily'));
      } finally {
        await close();
      }
    });
  });
}
