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

const newNodeRedis = (url: string) => createClient({ url });
type NodeRedisClient = ReturnType<typeof newNodeRedis>;

export interface CommandStat {
  readonly calls: number;
  readonly usec: number;
}

export interface BenchRedis {
  readonly url: string;
  readonly version: string;
  /** One command on a fresh admin connection, never through the clients under test. */
  call(...args: string[]): Promise<unknown>;
  /** `INFO commandstats` as command -> totals since the last `resetStats()`. */
  commandStats(): Promise<Map<string, CommandStat>>;
  resetStats(): Promise<void>;
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
  let ioredis: Promise<Redis> | undefined;
  let nodeRedis: Promise<NodeRedisClient> | undefined;
  const call = (...args: string[]) => redisCall(HOST, port, args, 30_000);
  const info = async (section: string) => String(await call('INFO', section));
  const version = /redis_version:(\S+)/.exec(await info('server'))?.[1] ?? 'unknown';
  return {
    url,
    version,
    call,
    async commandStats() {
      const stats = new Map<string, CommandStat>();
      for (const match of (await info('commandstats')).matchAll(/^cmdstat_(\S+?):calls=(\d+),usec=(\d+)/gm)) {
        stats.set(match[1] as string, { calls: Number(match[2]), usec: Number(match[3]) });
      }
      return stats;
    },
    async resetStats() {
      await call('CONFIG', 'RESETSTAT');
    },
    async usedMemory() {
      return Number(/^used_memory:(\d+)/m.exec(await info('memory'))?.[1]);
    },
    ioredis() {
      ioredis ??= (async () => {
        const client = new Redis({ host: HOST, port });
        closers.push(() => client.quit());
        await client.ping();
        return client;
      })();
      return ioredis;
    },
    nodeRedis() {
      nodeRedis ??= (async () => {
        const client = newNodeRedis(url);
        closers.push(() => client.close());
        await client.connect();
        return client;
      })();
      return nodeRedis;
    },
    async stop() {
      await Promise.allSettled(closers.map((close) => close()));
      await stopProcess(child);
      await removeTempDir(dir);
    },
  };
}

/** Commands the bench itself sends (stats, flushes, probes), left out of every per-decision count. */
const ADMIN = /^(info|config\|.*|flushall|memory\|.*|ping|client\|.*|hello|select|scan|dbsize|function\|.*)$/;

/** Calls of every command but the bench's own, and of the scripts (EVAL, EVALSHA, FCALL), with their server time. */
export function decisionCommands(stats: ReadonlyMap<string, CommandStat>): {
  readonly commands: number;
  readonly scriptCalls: number;
  readonly scriptUsec: number;
} {
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
