// The resharding tests' load: worker processes driven pass by pass, their tallies summed, identifiers picked by slot.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { tokenBucket } from '../../src/index.js';
import { bucketKeys } from '../../src/stores/key.js';
import { clusterSlot } from '../../src/stores/redis/cluster-slot.js';
import { signalChild } from '../harness/redis-server.js';
import { spawnWorker, type Worker } from '../harness/worker-process.js';
import type { Group, Job, Message, Tally, WorkerConfig } from './resharding-worker.js';

const WORKER = fileURLToPath(new URL('./resharding-worker.ts', import.meta.url));
const POLL_MS = 10;
const CLOSE_TIMEOUT_MS = 10_000;

function send(worker: Worker, message: Message): void {
  worker.child.stdin.write(`${JSON.stringify(message)}\n`);
}

/** Long-lived worker processes, as application servers are: each keeps its store across every change. */
export class LoadPool {
  private constructor(readonly workers: readonly Worker[]) {}

  static async start(count: number, config: Omit<WorkerConfig, 'index'>): Promise<LoadPool> {
    const workers: Worker[] = [];
    const pool = new LoadPool(workers);
    for (let index = 0; index < count; index++)
      workers.push(spawnWorker(WORKER, { ...config, index }, () => {}));
    try {
      for (const worker of workers) assert.equal(await worker.nextLine(), 'ready');
    } catch (error) {
      pool.kill();
      throw error;
    }
    return pool;
  }

  run(job: Job): LoadRun {
    return new LoadRun(this.workers, job);
  }

  /** Ends the workers by closing their input (each then closes its store and exits), or by force after a while. */
  async close(timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
    for (const { child } of this.workers) child.stdin.end();
    const closed = Promise.all(this.workers.map((worker) => worker.closed));
    const late = sleep(timeoutMs, 'late' as const, { ref: false });
    const codes = await Promise.race([closed, late]);
    this.kill();
    assert.deepEqual(
      codes,
      this.workers.map(() => 0),
      'workers did not exit cleanly',
    );
  }

  /** Only after a failure can a worker still be running. */
  kill(): void {
    for (const { child } of this.workers) signalChild(child, 'SIGKILL');
  }
}

/** One job on every worker: its passes as they complete, and the tallies once stopped. */
export class LoadRun {
  readonly #passes: number[];
  readonly #tallies: Promise<Tally>[];
  readonly #ended: boolean[];

  constructor(
    private readonly workers: readonly Worker[],
    job: Job,
  ) {
    this.#passes = workers.map(() => 0);
    this.#ended = workers.map(() => false);
    this.#tallies = workers.map((worker, w) => this.#read(worker, w));
    // Awaited later; a worker that dies meanwhile must fail the test there, not as an unhandled rejection.
    for (const tally of this.#tallies) tally.catch(() => {});
    for (const worker of workers) send(worker, { run: job });
  }

  async #read(worker: Worker, w: number): Promise<Tally> {
    try {
      for (;;) {
        const line = await worker.nextLine();
        if (line.startsWith('pass ')) this.#passes[w] = Number(line.slice(5));
        else if (line.startsWith('done ')) return JSON.parse(line.slice(5)) as Tally;
        else throw new Error(`worker ${w} said ${JSON.stringify(line)}`);
      }
    } finally {
      this.#ended[w] = true;
    }
  }

  /** Passes each worker has completed. */
  passes(): number[] {
    return [...this.#passes];
  }

  /** Until every worker has completed `target[w]` passes (or `target` for all). */
  async until(target: number | readonly number[], timeoutMs: number): Promise<void> {
    const wanted = (w: number) => (typeof target === 'number' ? target : (target[w] ?? 0));
    const deadline = Date.now() + timeoutMs;
    while (this.#passes.some((done, w) => done < wanted(w))) {
      // A worker that ended early hit its own bounds: the traffic did not span what the test needed.
      if (this.#ended.some(Boolean)) await Promise.all(this.#tallies);
      assert.ok(
        this.#ended.every((ended) => !ended),
        'a worker ended its traffic before the test stopped it',
      );
      assert.ok(
        Date.now() < deadline,
        `passes ${this.#passes} did not reach ${target} within ${timeoutMs} ms`,
      );
      await sleep(POLL_MS);
    }
  }

  /** Stops the traffic; `window` is the span of the change, to count the watched decisions made during it. */
  stop(window: readonly [number, number]): Promise<Tally[]> {
    for (const worker of this.workers) send(worker, { stop: window });
    return Promise.all(this.#tallies);
  }
}

export interface Totals {
  /** Real admissions per group and identifier, over every worker. */
  readonly admitted: number[][];
  readonly denied: number;
  readonly degraded: number;
  readonly degradedAdmitted: number;
  readonly watched: Tally['watched'];
  readonly errors: number;
  /** Decisions of calls to a node that it no longer served, sent again in a call of their slot. */
  readonly resentBySlot: number;
}

export function sumTallies(tallies: readonly Tally[]): Totals {
  const [first] = tallies;
  assert.ok(first);
  const watched = { during: 0, duringAdmitted: 0, duringDegraded: 0, after: 0 };
  for (const tally of tallies)
    for (const name of Object.keys(watched) as (keyof typeof watched)[]) watched[name] += tally.watched[name];
  const sum = (pick: (tally: Tally) => number) => tallies.reduce((total, tally) => total + pick(tally), 0);
  return {
    admitted: first.admitted.map((ids, g) => ids.map((_, i) => sum((tally) => tally.admitted[g]?.[i] ?? 0))),
    denied: sum((tally) => tally.denied),
    degraded: sum((tally) => tally.degraded),
    degradedAdmitted: sum((tally) => tally.degradedAdmitted),
    watched,
    errors: sum((tally) => tally.store.errors),
    resentBySlot: sum((tally) => tally.store.resentBySlot),
  };
}

/** Every identifier of every group admitted exactly its limit, and no degraded answer admitted anything. */
export function assertExact(groups: readonly Group[], totals: Totals): void {
  assert.equal(totals.degradedAdmitted, 0, 'a degraded answer admitted: the store failed open');
  const wrong = groups.flatMap((group, g) =>
    group.ids.flatMap((id, i) => {
      const admitted = totals.admitted[g]?.[i];
      return admitted === group.limit ? [] : [`${group.scope} ${id}: ${admitted} of ${group.limit}`];
    }),
  );
  assert.deepEqual(wrong, [], 'identifiers that did not admit exactly their limit');
}

/**
 * `count` identifiers `<stem>-<n>` whose bucket under `scope` lies in one of `slots` (any slot when undefined):
 * the slot of a key is known from its name, so a test can aim its traffic at the slots it moves.
 */
export function idsInSlots(
  keyPrefix: string,
  scope: string,
  stem: string,
  count: number,
  slots?: ReadonlySet<number>,
): string[] {
  const policies = [tokenBucket({ capacity: 1, refillPerSecond: 0 })];
  const ids: string[] = [];
  for (let n = 0; ids.length < count; n++) {
    assert.ok(n < 10_000_000, `fewer than ${count} identifiers in ${slots?.size} slots`);
    const id = `${stem}-${n}`;
    if (slots === undefined || slots.has(clusterSlot(keyPrefix + bucketKeys(scope, id, policies)[0])))
      ids.push(id);
  }
  return ids;
}

export function slotOf(keyPrefix: string, scope: string, id: string): number {
  return clusterSlot(
    keyPrefix + bucketKeys(scope, id, [tokenBucket({ capacity: 1, refillPerSecond: 0 })])[0],
  );
}
