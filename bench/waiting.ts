// Section 7: callers of wait() on a full concurrency limit and on a window: store calls per admission, order, and
// how soon a slot freed by another process is taken.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  type AnyPolicy,
  concurrency,
  createLimiter,
  type Decision,
  fixedWindow,
  MemoryStore,
} from '../src/index.js';
import { RedisStore } from '../src/stores/redis/index.js';
import type { Store } from '../src/stores/store.js';
import { countingStore } from '../test/limiter/wait-helpers.js';
import type { BenchRedis } from './redis.js';
import { count, fixed, median, type Table } from './table.js';
import { HOLDER_SCOPE, heldSlot } from './waiting-slot.js';

export interface WaitingSettings {
  readonly waiters: number;
  readonly pickups: number;
}

interface CrowdResult {
  readonly engine: 'memory' | 'redis';
  readonly limit: string;
  readonly admitted: number;
  readonly callsPerAdmission: number;
  /** The most later callers admitted before any one caller. */
  readonly mostOvertaking: number;
  readonly seconds: number;
}

export interface WaitingResult {
  readonly crowds: readonly CrowdResult[];
  /** Ms from another process's release to the admission of the caller waiting here, one per trial. */
  readonly pickupsMs: readonly number[];
}

/** How long an admitted caller holds its slot: short, so that releases, not polls, drive the line. */
const HOLD_MS = 2;

const LIMITS: readonly { name: string; policy: () => AnyPolicy }[] = [
  { name: 'concurrency, 4 slots (each held 2 ms)', policy: () => concurrency({ max: 4, leaseMs: 60_000 }) },
  { name: 'fixed window, 50 per 100 ms', policy: () => fixedWindow({ limit: 50, windowMs: 100 }) },
];

/** `waiters` callers of wait() on one identifier, all at once; each admitted one holds its slot HOLD_MS. */
async function crowd(
  engine: CrowdResult['engine'],
  inner: Store,
  limit: (typeof LIMITS)[number],
  waiters: number,
  scope: string,
): Promise<CrowdResult> {
  const { store, calls } = countingStore(inner);
  const limiter = createLimiter({ policy: limit.policy(), store, scope });
  const order: number[] = [];
  const hold = async (decision: Decision, i: number) => {
    order.push(i);
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    await decision.release?.();
  };
  const releases = limit.name.startsWith('concurrency') ? waiters : 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: waiters }, (_, i) => limiter.wait('crowd').then((d) => hold(d, i))));
  const seconds = (performance.now() - started) / 1000;
  let mostOvertaking = 0;
  order.forEach((caller, at) => {
    mostOvertaking = Math.max(
      mostOvertaking,
      order.slice(0, at).filter((earlier) => earlier > caller).length,
    );
  });
  return {
    engine,
    limit: limit.name,
    admitted: order.length,
    callsPerAdmission: (calls() - releases) / order.length,
    mostOvertaking,
    seconds,
  };
}

/**
 * Another process holds the one slot; a caller here waits for it; the other process frees it after a while: the
 * wait from its release to the admission here, measured on both processes' wall clocks (one machine).
 */
async function pickups(redis: BenchRedis, trials: number): Promise<number[]> {
  const script = fileURLToPath(new URL('./waiting-holder.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify({ url: redis.url })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => String((await lines.next()).value);
  const store = new RedisStore({ url: redis.url, commandTimeoutMs: 5000 });
  const limiter = createLimiter({ policy: heldSlot(), store, scope: HOLDER_SCOPE });
  const measured: number[] = [];
  try {
    for (let trial = 0; trial < trials; trial++) {
      const identifier = `pickup-${trial}`;
      child.stdin.write(`hold ${identifier}\n`);
      if ((await next()) !== 'held') throw new Error('the other process found the slot taken');
      const admitted = limiter.wait(identifier, { maxWaitMs: 30_000 }).then((d) => [Date.now(), d] as const);
      // A release at any moment of the poll's period: the figures spread over it.
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 250));
      child.stdin.write('release\n');
      const released = Number((await next()).split(' ')[1]);
      const [at, decision] = await admitted;
      measured.push(at - released);
      await decision.release?.();
    }
  } finally {
    child.stdin.end();
    await store.close();
  }
  return measured;
}

export async function runWaiting(redis: BenchRedis, settings: WaitingSettings): Promise<WaitingResult> {
  const crowds: CrowdResult[] = [];
  const redisStore = new RedisStore({ url: redis.url, commandTimeoutMs: 5000 });
  try {
    for (const [i, limit] of LIMITS.entries()) {
      crowds.push(await crowd('memory', new MemoryStore(), limit, settings.waiters, `bench-crowd-${i}`));
      crowds.push(await crowd('redis', redisStore, limit, settings.waiters, `bench-crowd-${i}`));
    }
  } finally {
    await redisStore.close();
  }
  return { crowds, pickupsMs: await pickups(redis, settings.pickups) };
}

export function waitingTable({ crowds, pickupsMs }: WaitingResult, settings: WaitingSettings): Table {
  const sorted = [...pickupsMs].sort((a, b) => a - b);
  const p90 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)];
  return {
    title: `7. Waiting: ${count(settings.waiters)} callers of wait() on one identifier, and a slot freed elsewhere`,
    columns: ['engine', 'limit', 'admitted', 'store calls per admission', 'most overtaken by', 'seconds'],
    rows: [
      ...crowds.map((c) => [
        c.engine,
        c.limit,
        count(c.admitted),
        fixed(c.callsPerAdmission, 2),
        count(c.mostOvertaking),
        fixed(c.seconds, 2),
      ]),
      [
        'redis',
        `concurrency, 1 slot freed by another process: ms to pickup, median / p90 of ${pickupsMs.length}`,
        count(pickupsMs.length),
        '-',
        '-',
        `${fixed(median(pickupsMs), 0)} / ${fixed(p90, 0)} ms`,
      ],
    ],
    notes: [
      'Store calls per admission leave out the releases (one call each). Only the first caller in line asks the',
      'store: on a release in this process at once, otherwise every 100 ms, so a slot freed by another process is',
      'taken within about that; "most overtaken by" counts later callers of this process admitted before one.',
    ],
  };
}
