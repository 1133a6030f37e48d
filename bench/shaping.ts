// Section 6: what a concurrency slot (acquire + release) and a wait cost beside a plain decision, on both stores.
import { toDecision } from '../src/decision/decision.js';
import {
  type AnyPolicy,
  concurrency,
  createLimiter,
  type Decision,
  type Limiter,
  MemoryStore,
  tokenBucket,
} from '../src/index.js';
import { encodeIdentifier } from '../src/stores/key.js';
import { RedisStore } from '../src/stores/redis/index.js';
import type { Store, StoreRequest } from '../src/stores/store.js';
import { KEYS, medianLoad } from './direct.js';
import { keySequence } from './keys.js';
import { closedLoop, type Decider, inRotation, type LoadResult, touchEveryKey } from './load.js';
import { type BenchRedis, serverRun } from './redis.js';
import { count, fixed, median, ratio, type Table } from './table.js';

export interface ShapingSettings {
  readonly rounds: number;
  readonly memoryMs: number;
  readonly redisMs: number;
  readonly warmupMs: number;
}

const IN_FLIGHT = [1, 64] as const;
/** Never reached, as in section 1: every call is a full read-decide-write. */
const BUCKET = { capacity: 1_000_000, refillPerSecond: 1_000_000 / 3600 };
/** Never reached either: 64 calls in flight over 10,000 keys seldom hold two slots of one key at once. */
const SLOTS = { max: 100, leaseMs: 60_000 };
/**
 * One token, then one a minute: far slower than any row calls a key, so once each key has spent its token every
 * call books a place behind the last. How far ahead it books changes nothing of the work (one integer either way).
 */
const BOOKED_BUCKET = { capacity: 1, refillPerSecond: 1 / 60 };
/** Far beyond the debt any run builds (a minute per call to a key). */
const BOOK_AHEAD_MS = 86_400_000;

type Engine = 'memory' | 'redis';

interface Operation {
  readonly name: string;
  /** Store calls per operation: a slot is taken by one and released by another. */
  readonly calls: number;
  /** Fresh for each engine; `decide` is one operation, `allowed` says it went the way the row means. */
  open(store: Store, scope: string): Decider;
}

const PLAIN = 'consume, token bucket (the plain decision)';

const OPERATIONS: readonly Operation[] = [
  {
    name: PLAIN,
    calls: 1,
    open(store, scope) {
      const limiter = createLimiter({ policy: tokenBucket(BUCKET), store, scope });
      return { decide: (key) => limiter.consume(key), allowed: (d) => (d as Decision).allowed };
    },
  },
  slotOperation('consume + release, concurrency', () => [concurrency(SLOTS)]),
  slotOperation('consume + release, concurrency + token bucket', () => [
    concurrency(SLOTS),
    tokenBucket(BUCKET),
  ]),
  {
    name: 'wait, token bucket with tokens left (admits at once)',
    calls: 1,
    open(store, scope) {
      const limiter = createLimiter({ policy: tokenBucket(BUCKET), store, scope });
      // Admitted at once, not booked: a booking would put the caller to sleep.
      return {
        decide: (key) => limiter.wait(key),
        allowed: (d) => (d as Decision).allowed && (d as Decision).delayMs === undefined,
      };
    },
  },
  // The booking is measured at the store, as the pair below: the same request, admitted at once and booked.
  {
    name: "wait's store call alone, tokens left (admits at once)",
    calls: 1,
    open(store, scope) {
      const limiter = createLimiter({ policy: tokenBucket(BUCKET), store, scope });
      return {
        decide: (key) => waitsStoreCall(limiter, key),
        allowed: (d) => (d as Decision).allowed && (d as Decision).delayMs === undefined,
      };
    },
  },
  {
    name: "wait's store call alone, spent bucket (books ahead)",
    calls: 1,
    open(store, scope) {
      const limiter = createLimiter({ policy: tokenBucket(BOOKED_BUCKET), store, scope });
      return {
        decide: (key) => waitsStoreCall(limiter, key),
        allowed: (d) => (d as Decision).delayMs !== undefined,
      };
    },
  },
];

/** Each operation takes a slot and frees it at once: the pair a request holding a slot pays. */
function slotOperation(name: string, policies: () => AnyPolicy[]): Operation {
  return {
    name,
    calls: 2,
    open(store, scope) {
      const limiter = createLimiter({ policy: policies(), store, scope });
      return {
        decide: async (key) => {
          const decision = await limiter.consume(key);
          await decision.release?.();
          return decision;
        },
        allowed: (d) => (d as Decision).allowed && (d as Decision).release !== undefined,
      };
    },
  };
}

/**
 * What `wait` does up to its sleep: the store request it sends (as the limiter builds it) and the decision made of
 * the answer. After a booking comes the sleep, the caller parked on a timer, which costs no work.
 */
async function waitsStoreCall(limiter: Limiter, identifier: string): Promise<Decision> {
  const request: StoreRequest = {
    scope: limiter.scope,
    id: encodeIdentifier(identifier),
    // No lockout (`blockMs`) here, so the policies the store sees are the limiter's own.
    policies: limiter.policies,
    action: 'consume',
    cost: 1,
    lease: '',
    maxDelayMs: BOOK_AHEAD_MS,
  };
  const answer = limiter.store.evaluate(request);
  // As the limiter does: an in-process store's synchronous answer is not awaited.
  return toDecision(limiter.policies, answer instanceof Promise ? await answer : answer);
}

export interface ShapingMeasure {
  readonly engine: Engine;
  readonly operation: string;
  readonly calls: number;
  /** Medians over the rounds, per in-flight count. */
  readonly load: Record<number, LoadResult>;
  /** Redis only, from the 64-in-flight runs: script server µs per operation. */
  readonly serverUs?: number;
  /** Operations that did not go as the row means (a denial, a booking where none was wanted, or none where one was). */
  readonly offPath: number;
}

interface Opened {
  readonly engine: Engine;
  readonly operation: Operation;
  readonly decider: Decider;
  readonly close: () => Promise<void>;
}

async function openAll(redis: BenchRedis): Promise<Opened[]> {
  const client = await redis.ioredis();
  const storeOf = (engine: Engine): Store =>
    // A generous timeout, as in section 1: a fail-open answer would count as a fast one.
    engine === 'memory' ? new MemoryStore() : new RedisStore({ client, commandTimeoutMs: 2000 });
  // Each row its own store and scope, as in section 1: no row shares a batch or a bucket with another.
  return (['memory', 'redis'] as const).flatMap((engine) =>
    OPERATIONS.map((operation, i) => {
      const store = storeOf(engine);
      return {
        engine,
        operation,
        decider: operation.open(store, `bench-shaping-${i}`),
        close: async () => store.close?.(),
      };
    }),
  );
}

export async function runShaping(redis: BenchRedis, settings: ShapingSettings): Promise<ShapingMeasure[]> {
  await redis.call('FLUSHALL');
  const keys = keySequence(KEYS, 65_536);
  const distinct = [...new Set(keys)];
  const opened = await openAll(redis);
  for (const { engine, decider } of opened) {
    // Each booked row's key spends its one token before anything is measured.
    await touchEveryKey(decider, distinct);
    await closedLoop(decider, keys, 64, engine === 'memory' ? settings.warmupMs : 2 * settings.warmupMs);
  }
  const units = opened.flatMap((o) => IN_FLIGHT.map((inFlight) => ({ o, inFlight })));
  const loads = new Map(units.map((unit) => [unit, [] as LoadResult[]]));
  const server = new Map(opened.map((o) => [o, [] as number[]]));
  // Interleaved and rotated each round, as in section 1.
  await inRotation(units, settings.rounds, async (unit) => {
    const { o, inFlight } = unit;
    if (o.engine !== 'redis' || inFlight === 1) {
      loads.get(unit)?.push(await closedLoop(o.decider, keys, inFlight, settings.memoryMs));
      return;
    }
    const { load, scriptUsec } = await serverRun(redis, o.decider, keys, inFlight, settings.redisMs);
    loads.get(unit)?.push(load);
    server.get(o)?.push(scriptUsec / load.decisions);
  });
  for (const { close } of opened) await close();
  await redis.call('FLUSHALL');
  return opened.map((o) => {
    const load: Record<number, LoadResult> = {};
    let offPath = 0;
    for (const unit of units) {
      if (unit.o !== o) continue;
      load[unit.inFlight] = medianLoad(loads.get(unit) ?? []);
      for (const result of loads.get(unit) ?? []) offPath += result.denied;
    }
    return {
      engine: o.engine,
      operation: o.operation.name,
      calls: o.operation.calls,
      load,
      ...(o.engine === 'redis' ? { serverUs: median(server.get(o) ?? []) } : {}),
      offPath,
    };
  });
}

export function shapingTable(measures: readonly ShapingMeasure[]): Table {
  const plainOf = (m: ShapingMeasure) => measures.find((p) => p.engine === m.engine && p.operation === PLAIN);
  // A cost ratio: how many plain decisions' time one operation takes.
  const cost = (m: ShapingMeasure, inFlight: number) =>
    ratio(
      (plainOf(m)?.load[inFlight]?.perSecond ?? Number.NaN) / (m.load[inFlight]?.perSecond ?? Number.NaN),
    );
  const offPath = measures.filter((m) => m.offPath > 0);
  return {
    title: `6. Shaping: a concurrency slot and a wait beside a plain decision, direct API, ${count(KEYS)} random keys`,
    columns: [
      'store',
      'operation',
      'store calls',
      '1 in flight: ops/s',
      'p50 µs',
      'p99 µs',
      '64 in flight: ops/s',
      'p50 µs',
      'p99 µs',
      'cost vs plain, 1 in flight',
      'cost vs plain, 64 in flight',
      'Redis server µs per op',
      'vs plain',
    ],
    rows: measures.map((m) => {
      const [one, many] = [m.load[1], m.load[64]];
      const plainUs = plainOf(m)?.serverUs;
      return [
        m.engine,
        m.operation,
        String(m.calls),
        count(one?.perSecond ?? Number.NaN),
        fixed(one?.p50Us),
        fixed(one?.p99Us),
        count(many?.perSecond ?? Number.NaN),
        fixed(many?.p50Us),
        fixed(many?.p99Us),
        cost(m, 1),
        cost(m, 64),
        m.serverUs === undefined ? '-' : fixed(m.serverUs, 2),
        m.serverUs === undefined ? '-' : ratio(m.serverUs / (plainUs ?? Number.NaN)),
      ];
    }),
    notes: [
      "An op is one row's unit: a consume; a consume and its `release()` (the pair a request holding a slot pays); a",
      '`wait` that admits at once; or the store call a `wait` makes (the request as the limiter builds it, and the',
      'decision made of the answer) on a bucket with tokens left, then on a spent one (a token a minute: every call',
      'books a place ahead). A booking costs its row over the row above it; the sleep after it is no work and is not',
      "measured. Cost is the plain decision's ops/s over the row's on the same store: 2.00x means one op takes two",
      "decisions' time. Redis (ioredis) server time is the scripts' `INFO commandstats` usec over the ops at 64 in",
      'flight. Medians of interleaved rounds.',
      ...offPath.map(
        (m) =>
          `NOT AS MEANT: ${m.engine}, ${m.operation}: ${count(m.offPath)} ops were denied or not as the row means.`,
      ),
    ],
  };
}
