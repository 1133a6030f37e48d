// Shared exactness test: processes on their own Redis connections flood one hot key; exactly the limit passes.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLimiter } from '../../src/index.js';
import { signalChild } from '../harness/redis-server.js';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process.js';
import {
  type CaseSpec,
  count,
  emptyTally,
  HOT_KEY,
  type Library,
  openStore,
  policyFor,
  type StoreTarget,
  type Tally,
  type WorkerConfig,
} from '../redis/concurrency-worker.js';

const WORKER = fileURLToPath(new URL('../redis/concurrency-worker.ts', import.meta.url));
const WORKERS = 4;
/** Per worker and case: 800 attempts in all against a limit of 100. */
const ATTEMPTS = 200;
const IN_FLIGHT = 50;
const LIMIT = 100;
/**
 * 1000 / rate is a whole number of milliseconds, so the expected count below is exact integer arithmetic; and
 * the bucket takes 5 s to refill from empty, far longer than any pause between the flood and `endOnDenial`.
 */
const REFILL_PER_SECOND = 20;

export interface TargetFixture {
  readonly target: StoreTarget;
  close(): Promise<void>;
}

/** Starts every worker, releases them together once all are connected, and returns each one's tallies. */
async function runWorkers(config: WorkerConfig, children: Set<WorkerProcess>): Promise<Tally[][]> {
  const workers = Array.from({ length: WORKERS }, () =>
    spawnWorker(WORKER, config, (child) => children.add(child)),
  );
  for (const worker of workers) assert.equal(await worker.nextLine(), 'ready');
  for (const worker of workers) worker.child.stdin.end('go\n');
  const summaries = await Promise.all(workers.map((worker) => worker.nextLine()));
  assert.deepEqual(await Promise.all(workers.map((worker) => worker.closed)), Array(WORKERS).fill(0));
  return summaries.map((line) => JSON.parse(line) as Tally[]);
}

function sum(tallies: readonly Tally[]): Tally {
  return tallies.reduce(
    (total, t) => ({
      allowed: total.allowed + t.allowed,
      denied: total.denied + t.denied,
      degraded: total.degraded + t.degraded,
      firstNowMs: Math.min(total.firstNowMs, t.firstNowMs),
      lastNowMs: Math.max(total.lastNowMs, t.lastNowMs),
    }),
    emptyTally(),
  );
}

/**
 * Consumes after the flood until a denial, so that the very last decision on the key is one. Then GCRA pins the
 * total exactly: the k-th admission at server time t needs k <= capacity + (t - first) * rate, and the final
 * denial at `last` means k + 1 > capacity + (last - first) * rate, so k = capacity + floor((last - first) * rate).
 * (The flood never leaves the bucket idle long enough to fill up again, which would forfeit refill.)
 */
async function endOnDenial(
  library: Library,
  target: StoreTarget,
  spec: CaseSpec,
  total: Tally,
): Promise<void> {
  const { store, close } = await openStore(library, target);
  try {
    const limiter = createLimiter({ policy: policyFor(spec), store, scope: spec.scope });
    for (let i = 0; i < 1_000; i++) {
      const decision = await limiter.consume(HOT_KEY);
      count(total, decision);
      if (!decision.allowed) return;
    }
    assert.fail(`${spec.scope}: still admitting after 1000 sequential consumes`);
  } finally {
    await close();
  }
}

export function runExactness(name: string, makeTarget: () => Promise<TargetFixture>): void {
  describe(`exactness under concurrency on ${name}: ${WORKERS} processes on one hot key`, () => {
    const children = new Set<WorkerProcess>();
    let fixture: TargetFixture | undefined;
    after(async () => {
      // Only after a failed assertion can a worker still be running.
      for (const child of children) signalChild(child, 'SIGKILL');
      await fixture?.close();
    });

    for (const library of ['ioredis', 'node-redis'] as const) {
      it(`admits exactly the limit, or capacity plus refill, through ${library}`, async (t) => {
        fixture ??= await makeTarget();
        const { target } = fixture;
        // Unique scopes keep runs apart on a shared TEST_REDIS_URL server or TEST_REDIS_CLUSTER_NODES cluster.
        const run = randomUUID().slice(0, 8);
        const cases: CaseSpec[] = [
          { scope: `fixed-${run}`, policy: 'fixed-window', limit: LIMIT },
          { scope: `sliding-${run}`, policy: 'sliding-window', limit: LIMIT },
          { scope: `bucket-${run}`, policy: 'token-bucket', limit: LIMIT, refillPerSecond: 0 },
          {
            scope: `refill-${run}`,
            policy: 'token-bucket',
            limit: LIMIT,
            refillPerSecond: REFILL_PER_SECOND,
          },
        ];
        const perWorker = await runWorkers(
          { library, target, cases, attempts: ATTEMPTS, inFlight: IN_FLIGHT },
          children,
        );
        for (const [i, spec] of cases.entries()) {
          const total = sum(perWorker.map((tallies) => tallies[i] ?? emptyTally()));
          assert.equal(total.allowed + total.denied + total.degraded, WORKERS * ATTEMPTS, spec.scope);
          const rate = spec.refillPerSecond ?? 0;
          if (rate > 0) await endOnDenial(library, target, spec, total);
          const elapsedMs = total.lastNowMs - total.firstNowMs;
          t.diagnostic(`${spec.scope}: ${total.allowed} admitted over ${elapsedMs} ms of server time`);
          assert.equal(total.degraded, 0, `${spec.scope}: decisions fell back to the fail mode`);
          assert.equal(total.allowed, LIMIT + Math.floor((elapsedMs * rate) / 1000), spec.scope);
        }
      });
    }
  });
}
