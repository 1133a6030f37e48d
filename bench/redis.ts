// The bench's own throwaway redis-server (never a shared one: it flushes and resets stats freely) and what it reads back.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import {
  makeTempDir,
  redisCall,
  removeTempDir,
  spawnOnFreePort,
  stopProcess,
} from '../test/harness/redis-server.js';
import { closedLoop, type Decider, type LoadResult } from './load.js';

const newNodeRedis = (url: string) => createClient({ url });
type NodeRedisClient = ReturnType<typeof newNodeRedis>;

export interface CommandStat {
  readonly calls: number;
  readonly usec: number;
}

/** Where the server-side figures come from: one server, or every master of a cluster summed. */
export interface StatsSource {
  /** `INFO commandstats` as command -> totals since the last `resetStats()`. */
  commandStats(): Promise<Map<string, CommandStat>>;
  resetStats(): Promise<void>;
}

export interface BenchRedis extends StatsSource {
  readonly url: string;
  readonly version: string;
  /** One command on a fresh admin connection, never through the clients under test. */
  call(...args: string[]): Promise<unknown>;
  /** `INFO memory` used_memory, bytes. */
  usedMemory(): Promise<number>;
  /** One shared connection per client library, made on first use. */
  ioredis(): Promise<Redis>;
  nodeRedis(): Promise<NodeRedisClient>;
  /** Closes the clients it made and stops the server. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

export async function startBenchRedis(): Promise<BenchRedis> {
  // Deliberately not the harness's startRedisServer(): that one honours TEST_REDIS_URL, and this bench
  // flushes the server it measures.
  const dir = await makeTempDir('bench');
  const { child, port } = await spawnOnFreePort(dir, () => []);
  const url = `redis://${HOST}:${port}`;
  const closers: (() => Promise<unknown>)[] = [];
  const call = (...args: string[]) => redisCall(HOST, port, args, 30_000);
  const info = async (section: string) => String(await call('INFO', section));
  return {
    url,
    version: serverVersion(await info('server')),
    call,
    commandStats: async () => parseCommandStats(await info('commandstats')),
    async resetStats() {
      await call('CONFIG', 'RESETSTAT');
    },
    async usedMemory() {
      return Number(/^used_memory:(\d+)/m.exec(await info('memory'))?.[1]);
    },
    ioredis: sharedClient(closers, async () => {
      const client = new Redis({ host: HOST, port });
      await client.ping();
      return { client, close: () => client.quit() };
    }),
    nodeRedis: sharedClient(closers, async () => {
      const client = newNodeRedis(url);
      await client.connect();
      return { client, close: () => client.close() };
    }),
    async stop() {
      await Promise.allSettled(closers.map((close) => close()));
      await stopProcess(child);
      await removeTempDir(dir);
    },
  };
}

/** One client shared by every contender, made on first use; `closers` gets what closes it. */
export function sharedClient<T>(
  closers: (() => Promise<unknown>)[],
  open: () => Promise<{ client: T; close: () => Promise<unknown> }>,
): () => Promise<T> {
  let opened: Promise<T> | undefined;
  return () => {
    opened ??= open().then(({ client, close }) => {
      closers.push(close);
      return client;
    });
    return opened;
  };
}

export function serverVersion(serverInfo: string): string {
  return /redis_version:(\S+)/.exec(serverInfo)?.[1] ?? 'unknown';
}

/** `INFO commandstats` text as command -> totals. */
export function parseCommandStats(text: string): Map<string, CommandStat> {
  const stats = new Map<string, CommandStat>();
  for (const match of text.matchAll(/^cmdstat_(\S+?):calls=(\d+),usec=(\d+)/gm)) {
    stats.set(match[1] as string, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}

/**
 * Commands the bench itself sends (stats, flushes, probes), and the slot-map reads of cluster clients, left out of
 * every per-decision count.
 */
const ADMIN =
  /^(info|config\|.*|flushall|memory\|.*|ping|client\|.*|hello|select|scan|dbsize|function\|.*|cluster\|.*)$/;

export interface DecisionCommands {
  readonly commands: number;
  readonly scriptCalls: number;
  readonly scriptUsec: number;
}

/** Calls of every command but the bench's own, and of the scripts (EVAL, EVALSHA, FCALL), with their server time. */
export function decisionCommands(stats: ReadonlyMap<string, CommandStat>): DecisionCommands {
  let commands = 0;
  let scriptCalls = 0;
  let scriptUsec = 0;
  for (const [name, stat] of stats) {
    if (ADMIN.test(name)) continue;
    commands += stat.calls;
    if (name === 'eval' || name === 'evalsha' || name === 'fcall') {
      scriptCalls += stat.calls;
      scriptUsec += stat.usec;
    }
  }
  return { commands, scriptCalls, scriptUsec };
}

/** A closed-loop run between a stats reset and a stats read: the load, and what its decisions cost the server. */
export async function serverRun(
  stats: StatsSource,
  decider: Decider,
  keys: readonly string[],
  inFlight: number,
  durationMs: number,
): Promise<DecisionCommands & { readonly load: LoadResult }> {
  await stats.resetStats();
  const load = await closedLoop(decider, keys, inFlight, durationMs);
  return { load, ...decisionCommands(await stats.commandStats()) };
}
