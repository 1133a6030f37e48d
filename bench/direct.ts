// Sections 1 and 2: decisions per second and per-call latency on the direct API, and what each decision costs Redis.
import {
  type ClientLibrary,
  type Contender,
  expressRateLimitMemory,
  flexibleMemory,
  flexibleRedis,
  label,
  type Opened,
  type Quota,
  rateLimitRedis,
  TOLLGATE_POLICIES,
  tollgateMemory,
  tollgateRedis,
} from './contenders.js';
import { keySequence } from './keys.js';
import { closedLoop, inRotation, type LoadResult } from './load.js';
import { type BenchRedis, serverRun } from './redis.js';
import { count, fixed, median, ratio, type Table } from './table.js';

export interface DirectSettings {
  readonly rounds: number;
  readonly memoryMs: number;
  readonly redisMs: number;
  readonly warmupMs: number;
}

const IN_FLIGHT = [1, 64] as const;
export const KEYS = 10_000;
/**
 * Generous enough that no contender denies anything here: every call is a full read-decide-write. An hour's window,
 * so that no store's expiry work lands inside a measured run: rate-limiter-flexible's memory store sets a timer per
 * key, and 10,000 of them firing at a 60 s window's end stalled whichever contender was running then.
 */
const QUOTA: Quota = { limit: 1_000_000, windowMs: 3_600_000 };
/** The sliding window log keeps an entry per admitted request: a short window keeps its state to tens of entries. */
const LOG_QUOTA: Quota = { limit: 10_000, windowMs: 1_000 };
const CLIENTS: readonly ClientLibrary[] = ['ioredis', 'node-redis'];

export interface DirectMeasure {
  readonly contender: Contender;
  readonly label: string;
  /** Medians over the rounds, per in-flight count. */
  readonly load: Record<number, LoadResult>;
  /** Redis only, from the 64-in-flight runs: server µs per script call and commands per decision. */
  readonly serverUs?: number;
  readonly commandsPerDecision?: number;
}

function directContenders(redis: BenchRedis): Contender[] {
  const quotaOf = (kind: string) => (kind === 'sliding-window' ? LOG_QUOTA : QUOTA);
  return [
    ...TOLLGATE_POLICIES.map((kind) => tollgateMemory(kind, quotaOf(kind))),
    expressRateLimitMemory(QUOTA),
    flexibleMemory(QUOTA),
    ...CLIENTS.flatMap((client) => [
      ...TOLLGATE_POLICIES.map((kind) => tollgateRedis(redis, client, kind, quotaOf(kind))),
      rateLimitRedis(redis, client, QUOTA),
      flexibleRedis(redis, client, QUOTA),
    ]),
  ];
}

export async function runDirect(redis: BenchRedis, settings: DirectSettings): Promise<DirectMeasure[]> {
  const keys = keySequence(KEYS, 65_536);
  const contenders = directContenders(redis);
  const opened = new Map<Contender, Opened>();
  for (const contender of contenders) opened.set(contender, await contender.open());
  // Warm the JIT and fill every contender's 10,000 keys before anything is measured.
  for (const [contender, decider] of opened) {
    await closedLoop(
      decider,
      keys,
      64,
      contender.engine === 'memory' ? settings.warmupMs : 2 * settings.warmupMs,
    );
  }
  const units = contenders.flatMap((contender) => IN_FLIGHT.map((inFlight) => ({ contender, inFlight })));
  const loads = new Map(units.map((unit) => [unit, [] as LoadResult[]]));
  const server = new Map(contenders.map((c) => [c, { us: [] as number[], commands: [] as number[] }]));
  await inRotation(units, settings.rounds, async (unit) => {
    const { contender, inFlight } = unit;
    const decider = opened.get(contender) as Opened;
    const redisRun = contender.engine === 'redis';
    // A lone Redis call takes ~100 µs: its runs are as long as the loaded ones, for enough samples of its p99.
    const ms = redisRun ? settings.redisMs : settings.memoryMs;
    if (!redisRun || inFlight === 1) {
      loads.get(unit)?.push(await closedLoop(decider, keys, inFlight, ms));
      return;
    }
    const { load, commands, scriptUsec } = await serverRun(redis, decider, keys, inFlight, ms);
    loads.get(unit)?.push(load);
    server.get(contender)?.us.push(scriptUsec / load.decisions);
    server.get(contender)?.commands.push(commands / load.decisions);
  });
  for (const decider of opened.values()) await decider.close();
  return contenders.map((contender) => {
    const load: Record<number, LoadResult> = {};
    for (const unit of units) {
      if (unit.contender === contender) load[unit.inFlight] = medianLoad(loads.get(unit) ?? []);
    }
    const cost = server.get(contender);
    return {
      contender,
      label: label(contender),
      load,
      ...(contender.engine === 'redis' && cost !== undefined
        ? { serverUs: median(cost.us), commandsPerDecision: median(cost.commands) }
        : {}),
    };
  });
}

export function medianLoad(results: readonly LoadResult[]): LoadResult {
  const of = (pick: (r: LoadResult) => number) => median(results.map(pick));
  return {
    decisions: of((r) => r.decisions),
    denied: of((r) => r.denied),
    perSecond: of((r) => r.perSecond),
    p50Us: of((r) => r.p50Us),
    p99Us: of((r) => r.p99Us),
  };
}

/** The same engine and client's peer rows, to divide by. */
export function peerOf<M extends { readonly contender: Contender }>(
  measures: readonly M[],
  of: Contender,
  library: 'express-rate-limit' | 'rate-limit-redis' | 'rate-limiter-flexible',
): M | undefined {
  return measures.find(
    (m) =>
      m.contender.library === library &&
      m.contender.engine === of.engine &&
      m.contender.client === of.client &&
      m.contender.variant === undefined,
  );
}

export function throughputTable(measures: readonly DirectMeasure[]): Table {
  const rate = (m: DirectMeasure | undefined) => m?.load[64]?.perSecond;
  return {
    title: `1. Decisions per second and per-call latency, direct API, ${count(KEYS)} random keys`,
    columns: [
      'store',
      'client',
      'contender',
      '1 in flight: dec/s',
      'p50 µs',
      'p99 µs',
      '64 in flight: dec/s',
      'p50 µs',
      'p99 µs',
      'vs express-rate-limit / rate-limit-redis',
      'vs rate-limiter-flexible',
    ],
    rows: measures.map((m) => {
      const [one, many] = [m.load[1], m.load[64]];
      const erl = peerOf(
        measures,
        m.contender,
        m.contender.engine === 'memory' ? 'express-rate-limit' : 'rate-limit-redis',
      );
      const rlf = peerOf(measures, m.contender, 'rate-limiter-flexible');
      return [
        m.contender.engine,
        m.contender.client ?? '-',
        m.label,
        count(one?.perSecond ?? Number.NaN),
        fixed(one?.p50Us),
        fixed(one?.p99Us),
        count(many?.perSecond ?? Number.NaN),
        fixed(many?.p50Us),
        fixed(many?.p99Us),
        ratio((rate(m) ?? Number.NaN) / (rate(erl) ?? Number.NaN)),
        ratio((rate(m) ?? Number.NaN) / (rate(rlf) ?? Number.NaN)),
      ];
    }),
    notes: [
      'Ratios are decisions/s at 64 in flight over the peer with the same store and client. The peers are fixed-window',
      'counters; every quota is large enough that nothing is denied, so each call is a full read-decide-write. The sliding',
      `window log runs at ${LOG_QUOTA.limit.toLocaleString('en-US')} per ${LOG_QUOTA.windowMs / 1000} s: its state is one entry per request in the window.`,
    ],
  };
}

export function serverTable(measures: readonly DirectMeasure[]): Table {
  const redisRows = measures.filter((m) => m.contender.engine === 'redis');
  return {
    title: '2. Redis server time and commands per decision (64 in flight)',
    columns: [
      'client',
      'contender',
      'server µs per decision',
      'vs rate-limiter-flexible',
      'Redis commands per decision',
    ],
    rows: redisRows.map((m) => {
      const rlf = peerOf(measures, m.contender, 'rate-limiter-flexible');
      return [
        m.contender.client ?? '-',
        m.label,
        fixed(m.serverUs, 2),
        ratio((m.serverUs ?? Number.NaN) / (rlf?.serverUs ?? Number.NaN)),
        fixed(m.commandsPerDecision, 2),
      ];
    }),
    notes: [
      'Server time is the `INFO commandstats` usec of the script calls (FCALL for Tollgate, whose engine is a Redis 7',
      'function; EVALSHA, or EVAL where the library sends the script each time, for the peers), which includes the',
      "commands they run, over the decisions made: for the peers, one call per decision; Tollgate sends a limiter's",
      'concurrent decisions in one call. Stats are reset before each run; medians of the interleaved runs. Commands per',
      "decision count every command but the bench's own.",
    ],
  };
}
