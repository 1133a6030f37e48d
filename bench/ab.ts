// `npm run bench:ab -- <git ref>`: this checkout's decision paths beside another revision's, interleaved in one
// run, as ratios; so that a change is measured against what it replaces on the same machine at the same moment.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { keySequence } from './keys.js';
import { closedLoop, type Decider, type LoadResult } from './load.js';
import { type BenchRedis, startBenchRedis } from './redis.js';
import { count, median, ratio, renderTable } from './table.js';

/** What the bench needs of a revision's sources: the same names in every revision it compares. */
interface Library {
  readonly createLimiter: (options: object) => { consume(key: string): Promise<{ allowed: boolean }> };
  readonly MemoryStore: new () => { close(): void };
  readonly RedisStore: new (options: object) => { close(): Promise<void> };
  readonly tokenBucket: (options: object) => unknown;
  readonly fixedWindow: (options: object) => unknown;
  readonly slidingWindowCounter: (options: object) => unknown;
  readonly slidingWindow: (options: object) => unknown;
}

const QUOTA = { limit: 1_000_000, windowMs: 3_600_000 };
const CASES = [
  { name: 'memory, token bucket', inFlight: 1, policy: (l: Library) => l.tokenBucket(bucket()) },
  { name: 'memory, fixed window', inFlight: 1, policy: (l: Library) => l.fixedWindow(QUOTA) },
  {
    name: 'memory, sliding window counter',
    inFlight: 1,
    policy: (l: Library) => l.slidingWindowCounter(QUOTA),
  },
  // The log keeps an entry per admitted request: a short window keeps each client's log to tens of entries.
  {
    name: 'memory, sliding window',
    inFlight: 1,
    policy: (l: Library) => l.slidingWindow({ limit: 10_000, windowMs: 1_000 }),
  },
  {
    name: 'Redis, token bucket, 1 in flight',
    inFlight: 1,
    redis: true,
    policy: (l: Library) => l.tokenBucket(bucket()),
  },
  {
    name: 'Redis, token bucket, 64 in flight',
    inFlight: 64,
    redis: true,
    policy: (l: Library) => l.tokenBucket(bucket()),
  },
] as const;
type Case = (typeof CASES)[number];

function bucket() {
  return { capacity: QUOTA.limit, refillPerSecond: (QUOTA.limit * 1000) / QUOTA.windowMs };
}

async function load(root: string): Promise<Library> {
  const from = (path: string) => import(pathToFileURL(join(root, path)).href);
  return { ...(await from('src/index.ts')), ...(await from('src/stores/redis/index.ts')) } as Library;
}

/** A checkout of `ref` beside this one, sharing its dependencies; removed by the function returned. */
function checkout(ref: string): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'tollgate-ab-'));
  execFileSync('git', ['worktree', 'add', '--detach', '--force', root, ref], { stdio: 'ignore' });
  symlinkSync(resolve('node_modules'), join(root, 'node_modules'));
  return {
    root,
    remove: () => {
      execFileSync('git', ['worktree', 'remove', '--force', root], { stdio: 'ignore' });
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function open(
  library: Library,
  test: Case,
  redis: BenchRedis,
): Promise<Decider & { close(): Promise<void> }> {
  const store =
    'redis' in test
      ? new library.RedisStore({ url: redis.url, commandTimeoutMs: 2000 })
      : new library.MemoryStore();
  const limiter = library.createLimiter({
    policy: test.policy(library),
    store,
    scope: `ab-${Math.random()}`,
  });
  return {
    decide: (key) => limiter.consume(key),
    allowed: (outcome) => (outcome as { allowed: boolean }).allowed,
    close: async () => store.close(),
  };
}

async function main(): Promise<void> {
  const [ref = 'HEAD', ...rest] = process.argv.slice(2).filter((arg) => arg !== '--');
  const rounds = Number(rest[rest.indexOf('--rounds') + 1] ?? 5) || 5;
  const base = checkout(ref);
  const redis = await startBenchRedis();
  try {
    const libraries = { current: await load(process.cwd()), [ref]: await load(base.root) };
    const keys = keySequence(10_000, 65_536);
    const units = CASES.flatMap((test) =>
      Object.entries(libraries).map(([revision, library]) => ({ test, revision, library })),
    );
    const opened = new Map(
      await Promise.all(units.map(async (u) => [u, await open(u.library, u.test, redis)] as const)),
    );
    for (const [unit, decider] of opened) await closedLoop(decider, keys, unit.test.inFlight, 300);
    const results = new Map(units.map((unit) => [unit, [] as LoadResult[]]));
    for (let round = 0; round < rounds; round++) {
      // Interleaved and rotated each round, so that a slow moment of the machine lands on each in turn.
      const shift = Math.floor((round * units.length) / rounds);
      for (const unit of [...units.slice(shift), ...units.slice(0, shift)]) {
        const ms = 'redis' in unit.test ? 1000 : 500;
        results.get(unit)?.push(await closedLoop(opened.get(unit) as Decider, keys, unit.test.inFlight, ms));
      }
    }
    for (const decider of opened.values()) await decider.close();
    const perSecond = (test: Case, revision: string) =>
      median(
        (
          results.get(
            units.find((u) => u.test === test && u.revision === revision) as (typeof units)[number],
          ) ?? []
        ).map((r) => r.perSecond),
      );
    console.log(
      renderTable({
        title: `Decision paths: this checkout beside ${ref} (${rounds} interleaved rounds, medians)`,
        columns: ['path', 'this checkout /s', `${ref} /s`, 'ratio'],
        rows: CASES.map((test) => {
          const now = perSecond(test, 'current');
          const then = perSecond(test, ref);
          return [test.name, count(now), count(then), ratio(now / then)];
        }),
        notes: [
          `Node ${process.version}, Redis ${redis.version}; a ratio above 1.00x is this checkout faster.`,
        ],
      }),
    );
  } finally {
    await redis.stop();
    base.remove();
  }
}

await main();
