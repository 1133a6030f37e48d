// Section 4: one client far over its limit; what each of its rejected requests costs Redis.
import {
  type Contender,
  flexibleRedis,
  label,
  type Quota,
  rateLimitRedis,
  tollgateRedis,
} from './contenders.js';
import { closedLoop } from './load.js';
import { type BenchRedis, decisionCommands } from './redis.js';
import { count, fixed, type Table } from './table.js';

export interface FloodMeasure {
  readonly label: string;
  readonly contender: Contender;
  readonly requests: number;
  readonly rejected: number;
  readonly commands: number;
  readonly rejectedPerSecond: number;
}

/** Ten per minute: the flood passes it within its first milliseconds and is rejected from then on. */
const QUOTA: Quota = { limit: 10, windowMs: 60_000 };
const IN_FLIGHT = 64;

function floodContenders(redis: BenchRedis): Contender[] {
  return [
    tollgateRedis(redis, 'ioredis', 'token-bucket', QUOTA),
    tollgateRedis(redis, 'ioredis', 'token-bucket', QUOTA, {
      name: 'deny cache off',
      options: { localDenyCache: 0 },
    }),
    rateLimitRedis(redis, 'ioredis', QUOTA),
    flexibleRedis(redis, 'ioredis', QUOTA),
    flexibleRedis(redis, 'ioredis', QUOTA, {
      name: 'in-memory block',
      options: { inMemoryBlockOnConsumed: QUOTA.limit + 1, inMemoryBlockDuration: QUOTA.windowMs / 1000 },
    }),
  ];
}

export async function runFlood(redis: BenchRedis, durationMs: number): Promise<FloodMeasure[]> {
  const measures: FloodMeasure[] = [];
  for (const [i, contender] of floodContenders(redis).entries()) {
    const decider = await contender.open();
    // A client no earlier run has touched, so every contender starts from a full quota.
    const keys = [`flood-${i}`];
    await redis.resetStats();
    const result = await closedLoop(decider, keys, IN_FLIGHT, durationMs);
    const { commands } = decisionCommands(await redis.commandStats());
    await decider.close();
    measures.push({
      label: label(contender),
      contender,
      requests: result.decisions,
      rejected: result.denied,
      commands,
      rejectedPerSecond: (result.denied / result.decisions) * result.perSecond,
    });
  }
  return measures;
}

export function floodTable(measures: readonly FloodMeasure[], durationMs: number): Table {
  return {
    title: `4. Flood: one client, ${QUOTA.limit} per ${QUOTA.windowMs / 1000} s allowed, ${IN_FLIGHT} requests in flight for ${durationMs / 1000} s (ioredis)`,
    columns: [
      'contender',
      'requests',
      'rejected',
      'Redis commands',
      'commands per rejected request',
      'rejected/s',
    ],
    rows: measures.map((m) => [
      m.label,
      count(m.requests),
      count(m.rejected),
      count(m.commands),
      fixed(m.commands / m.rejected, 4),
      count(m.rejectedPerSecond),
    ]),
    notes: [
      'Commands are every command Redis ran during the flood (scripts and their inner calls), from `INFO commandstats`.',
      "Tollgate's local deny cache holds a denial only until its exact retry time; rate-limiter-flexible's in-memory",
      'block is an option (off by default) that blocks for a fixed duration.',
    ],
  };
}
