// Section 5: bytes per tracked key, in Redis (per policy) and in the Node heap of each memory store.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  type Contender,
  flexibleRedis,
  type Quota,
  rateLimitRedis,
  TOLLGATE_POLICIES,
  tollgateRedis,
} from './contenders.js';
import type { HeapReply } from './heap.js';
import { addressIdentity } from './keys.js';
import type { BenchRedis } from './redis.js';
import { count, fixed, median, type Table } from './table.js';

export interface MemorySettings {
  readonly redisKeys: number;
  readonly heapKeys: readonly number[];
}

export interface MemoryMeasure {
  readonly library: string;
  readonly policy: string;
  readonly redisBytesPerKey: number;
  /** Median `MEMORY USAGE` of sampled keys: the key and value, without the expiry or the keyspace's tables. */
  readonly memoryUsage: number;
  /** Keyed by the number of keys tracked. */
  readonly heapBytesPerKey: Record<number, number>;
}

/** One request per key: any quota the sliding window log accepts will do. */
const QUOTA: Quota = { limit: 10_000, windowMs: 60_000 };
const IN_FLIGHT = 64;
const SAMPLES = 50;

/** `INFO memory` used_memory before and after `keys` fresh clients, each after its first request. */
async function redisBytes(redis: BenchRedis, contender: Contender, keys: number) {
  const decider = await contender.open();
  await decider.decide('warm-up');
  await redis.call('FLUSHALL');
  const before = await redis.usedMemory();
  let next = 0;
  const worker = async () => {
    while (next < keys) await decider.decide(addressIdentity(next++));
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const after = await redis.usedMemory();
  const usage: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const key = String(await redis.call('RANDOMKEY'));
    usage.push(Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')));
  }
  await decider.close();
  await redis.call('FLUSHALL');
  return { bytesPerKey: (after - before) / keys, memoryUsage: median(usage) };
}

const run = promisify(execFile);

async function heapBytes(name: string, keys: number): Promise<number> {
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', new URL('./heap.ts', import.meta.url).pathname, name, String(keys)],
    { maxBuffer: 1 << 20 },
  );
  return (JSON.parse(stdout) as HeapReply).bytesPerKey;
}

export async function runMemory(redis: BenchRedis, settings: MemorySettings): Promise<MemoryMeasure[]> {
  const rows: { library: string; policy: string; redis: Contender; heap: string }[] = [
    ...TOLLGATE_POLICIES.map((kind) => ({
      library: 'Tollgate',
      policy: kind,
      redis: tollgateRedis(redis, 'ioredis', kind, QUOTA),
      heap: kind,
    })),
    {
      library: 'express-rate-limit / rate-limit-redis',
      policy: 'fixed-window',
      redis: rateLimitRedis(redis, 'ioredis', QUOTA),
      heap: 'express-rate-limit',
    },
    {
      library: 'rate-limiter-flexible',
      policy: 'fixed-window',
      redis: flexibleRedis(redis, 'ioredis', QUOTA),
      heap: 'rate-limiter-flexible',
    },
  ];
  const measures: MemoryMeasure[] = [];
  for (const row of rows) {
    const inRedis = await redisBytes(redis, row.redis, settings.redisKeys);
    const heapBytesPerKey: Record<number, number> = {};
    for (const keys of settings.heapKeys) heapBytesPerKey[keys] = await heapBytes(row.heap, keys);
    measures.push({
      library: row.library,
      policy: row.policy,
      redisBytesPerKey: inRedis.bytesPerKey,
      memoryUsage: inRedis.memoryUsage,
      heapBytesPerKey,
    });
  }
  return measures;
}

export function memoryTable(measures: readonly MemoryMeasure[], settings: MemorySettings): Table {
  return {
    title: `5. Bytes per tracked key: Redis over ${count(settings.redisKeys)} keys, Node heap of the memory store`,
    columns: [
      'library',
      'policy',
      'Redis: used_memory delta per key',
      'Redis: MEMORY USAGE (median)',
      ...settings.heapKeys.map((keys) => `heap per key at ${count(keys)}`),
    ],
    rows: measures.map((m) => [
      m.library,
      m.policy,
      fixed(m.redisBytesPerKey),
      fixed(m.memoryUsage, 0),
      ...settings.heapKeys.map((keys) => fixed(m.heapBytesPerKey[keys])),
    ]),
    notes: [
      'Keys are IPv4 addresses such as 10.1.2.3, each with one request. The used_memory delta includes the keyspace',
      'and expiry tables; MEMORY USAGE counts only the key and its value. Heap is heapUsed plus ArrayBuffer contents',
      'after forced GC, in a child process per store and size; each key is a fresh string, so whatever a store keeps',
      'of it is counted.',
    ],
  };
}
