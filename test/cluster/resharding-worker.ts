// One process of the resharding tests: a RedisStore on the cluster, passes of decisions until told to stop, a tally.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { createLimiter, type Decision, type Limiter, tokenBucket } from '../../src/index.js';
import { RedisStore, type RootNode } from '../../src/stores/redis/index.js';

export interface WorkerConfig {
  readonly rootNodes: readonly RootNode[];
  readonly keyPrefix: string;
  /** Consumes outstanding at any time. */
  readonly inFlight: number;
  /** Which worker this is: each shuffles its passes differently. */
  readonly index: number;
}

/** Identifiers of one limiter: a token bucket of `limit` that never refills, so exactly `limit` may pass. */
export interface Group {
  readonly scope: string;
  readonly limit: number;
  readonly ids: readonly string[];
  /** Consumes of each identifier by each worker in each pass. */
  readonly perPass: number;
  /** Indices of the identifiers whose slots the test moves (or whose master it fails over). */
  readonly watched: readonly number[];
}

export interface Job {
  readonly groups: readonly Group[];
  /** Bounds on the traffic should the test never say stop. */
  readonly maxPasses: number;
  readonly maxMs: number;
}

/**
 * What the test tells a worker, a JSON line each: run a job, or stop it (with the span of the change, in Date.now()
 * time). The worker answers 'ready' once connected, 'pass <n>' after each pass, and 'done <Tally as JSON>'.
 */
export type Message = { readonly run: Job } | { readonly stop: readonly [number, number] };

export interface Tally {
  /** Real admissions per group and identifier. */
  readonly admitted: number[][];
  denied: number;
  degraded: number;
  /** Degraded answers that admitted: failing open, which the store was told never to do. */
  degradedAdmitted: number;
  passes: number;
  /** Decisions on watched identifiers completed inside the window the test gave with stop, and after it. */
  readonly watched: { during: number; duringAdmitted: number; duringDegraded: number; after: number };
  readonly store: { errors: number; breakerTrips: number; scriptReloads: number; resentBySlot: number };
}

const quietLogger = { warn: () => {}, error: () => {} };

/** A small seeded generator: each worker and pass takes the identifiers in its own, repeatable order. */
function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0;
  for (let i = items.length - 1; i > 0; i--) {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    const j = state % (i + 1);
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

function schedule(groups: readonly Group[], seed: number): [number, number][] {
  const tasks: [number, number][] = [];
  for (const [g, group] of groups.entries())
    for (let i = 0; i < group.ids.length; i++) for (let k = 0; k < group.perPass; k++) tasks.push([g, i]);
  return shuffled(tasks, seed);
}

class Run {
  stopped = false;
  window: readonly [number, number] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  /** Per decision on a watched identifier: when it completed, and whether it admitted or was degraded. */
  readonly records: [number, boolean, boolean][] = [];
  readonly tally: Tally;
  readonly #watched: Set<number>[];

  constructor(readonly job: Job) {
    this.#watched = job.groups.map((group) => new Set(group.watched));
    this.tally = {
      admitted: job.groups.map((group) => group.ids.map(() => 0)),
      denied: 0,
      degraded: 0,
      degradedAdmitted: 0,
      passes: 0,
      watched: { during: 0, duringAdmitted: 0, duringDegraded: 0, after: 0 },
      store: { errors: 0, breakerTrips: 0, scriptReloads: 0, resentBySlot: 0 },
    };
  }

  count(g: number, i: number, decision: Decision): void {
    const { tally } = this;
    const degraded = decision.degraded !== undefined;
    if (degraded) {
      tally.degraded++;
      if (decision.allowed) tally.degradedAdmitted++;
    } else if (decision.allowed) {
      const row = tally.admitted[g] as number[];
      row[i] = (row[i] ?? 0) + 1;
    } else tally.denied++;
    if (this.#watched[g]?.has(i)) this.records.push([Date.now(), decision.allowed && !degraded, degraded]);
  }

  finish(store: RedisStore): Tally {
    const [from, to] = this.window;
    const { watched } = this.tally;
    for (const [at, admitted, degraded] of this.records) {
      if (at > to) watched.after++;
      else if (at >= from) {
        watched.during++;
        if (admitted) watched.duringAdmitted++;
        if (degraded) watched.duringDegraded++;
      }
    }
    const { errors, breakerTrips, scriptReloads, resentBySlot } = store.metrics;
    Object.assign(this.tally.store, { errors, breakerTrips, scriptReloads, resentBySlot });
    return this.tally;
  }
}

async function runJob(run: Run, store: RedisStore, config: WorkerConfig): Promise<Tally> {
  const { job } = run;
  const limiters: Limiter[] = job.groups.map(({ scope, limit }) =>
    createLimiter({ policy: tokenBucket({ capacity: limit, refillPerSecond: 0 }), store, scope }),
  );
  const started = Date.now();
  const more = () => !run.stopped && Date.now() - started < job.maxMs;
  for (let pass = 1; pass <= job.maxPasses && more(); pass++) {
    const tasks = schedule(job.groups, config.index * 7919 + pass);
    let next = 0;
    const lane = async () => {
      while (next < tasks.length && more()) {
        const [g, i] = tasks[next++] as [number, number];
        const group = job.groups[g] as Group;
        run.count(g, i, await (limiters[g] as Limiter).consume(group.ids[i] as string));
      }
    };
    await Promise.all(Array.from({ length: config.inFlight }, lane));
    if (next < tasks.length) break;
    run.tally.passes = pass;
    process.stdout.write(`pass ${pass}\n`);
  }
  return run.finish(store);
}

async function main(config: WorkerConfig): Promise<void> {
  // Failing closed with a generous budget: a slow machine or a cluster in motion shows as degraded denials, never
  // as admissions.
  const store = new RedisStore({
    rootNodes: config.rootNodes,
    keyPrefix: config.keyPrefix,
    failOpen: false,
    commandTimeoutMs: 5000,
    connectTimeoutMs: 5000,
    // A node's breaker opened during a change is probed often, so it closes within the passes that follow.
    reconnectCooldownMs: 200,
    logger: quietLogger,
  });
  await store.connect();
  process.stdout.write('ready\n');
  let current: Run | undefined;
  let running: Promise<void> = Promise.resolve();
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const message = JSON.parse(line) as Message;
    if ('run' in message) {
      const run = new Run(message.run);
      current = run;
      running = runJob(run, store, config).then((tally) => {
        process.stdout.write(`done ${JSON.stringify(tally)}\n`);
      });
    } else if (current !== undefined) {
      current.window = message.stop;
      current.stopped = true;
    }
  });
  // The test closes stdin when it is done, or dies: either way no traffic outlives it.
  await new Promise((resolve) => lines.once('close', resolve));
  if (current !== undefined) current.stopped = true;
  await running;
  await store.close();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(JSON.parse(process.argv[2] ?? '') as WorkerConfig);
}
