// The bench's own throwaway Redis Cluster (never a shared one: it resets every master's stats) and what it reads back.
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { startOwnedRedisCluster } from '../test/harness/redis-cluster.js';
import { redisCall } from '../test/harness/redis-server.js';
import {
  type CommandStat,
  parseCommandStats,
  type StatsSource,
  serverVersion,
  sharedClient,
} from './redis.js';

const newNodeRedisCluster = (urls: readonly string[]) =>
  createCluster({ rootNodes: urls.map((url) => ({ url })) });
type NodeRedisCluster = ReturnType<typeof newNodeRedisCluster>;

export interface BenchCluster extends StatsSource {
  readonly version: string;
  /** The masters at start-up; nothing fails over during the bench, so they stay the masters. */
  readonly rootNodes: readonly { host: string; port: number }[];
  /** One shared cluster connection per client library, made on first use. */
  ioredis(): Promise<Cluster>;
  nodeRedis(): Promise<NodeRedisCluster>;
  /** Closes the clients it made and stops every node by pid. */
  stop(): Promise<void>;
}

/** Sums each command's totals over the masters: a decision's cost is paid on whichever master owns its key. */
function sumStats(perMaster: readonly Map<string, CommandStat>[]): Map<string, CommandStat> {
  const total = new Map<string, CommandStat>();
  for (const stats of perMaster) {
    for (const [name, stat] of stats) {
      const sum = total.get(name) ?? { calls: 0, usec: 0 };
      total.set(name, { calls: sum.calls + stat.calls, usec: sum.usec + stat.usec });
    }
  }
  return total;
}

/**
 * `masters` masters and no replicas, from redis-server on free loopback ports (the harness's own cluster, with
 * `cluster-require-full-coverage no`). No replicas: on a 2-core machine their replication work would take CPU from
 * the masters being measured, and nothing here fails over.
 */
export async function startBenchCluster(masters: number): Promise<BenchCluster> {
  const cluster = await startOwnedRedisCluster({ masters, replicasPerMaster: 0 });
  const closers: (() => Promise<unknown>)[] = [];
  try {
    const nodes = await cluster.masters();
    const onEvery = (...args: string[]) =>
      Promise.all(nodes.map((node) => redisCall(node.host, node.port, args, 30_000)));
    const [serverInfo] = await onEvery('INFO', 'server');
    const rootNodes = nodes.map(({ host, port }) => ({ host, port }));
    return {
      version: serverVersion(String(serverInfo)),
      rootNodes,
      commandStats: async () =>
        sumStats((await onEvery('INFO', 'commandstats')).map((text) => parseCommandStats(String(text)))),
      async resetStats() {
        await onEvery('CONFIG', 'RESETSTAT');
      },
      ioredis: sharedClient(closers, async () => {
        const client = new Cluster(rootNodes, { lazyConnect: true });
        await client.connect();
        return { client, close: () => client.quit() };
      }),
      nodeRedis: sharedClient(closers, async () => {
        const client = newNodeRedisCluster(nodes.map((node) => node.url));
        await client.connect();
        return { client, close: () => client.close() };
      }),
      async stop() {
        await Promise.allSettled(closers.map((close) => close()));
        await cluster.stop();
      },
    };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
