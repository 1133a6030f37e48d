// The three ways an application runs RedisStore on a Redis Cluster, as fixtures every cluster suite shares.
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import type { Limiter } from '../../src/index.js';
import { bucketKeys } from '../../src/stores/key.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import type { RedisFixture } from '../contract/differential.js';
import type { RedisCluster } from '../harness/redis-cluster.js';
import { redisCli } from '../harness/redis-server.js';

export const CLUSTER_CLIENTS = [
  'ioredis, own connection',
  'node-redis, app-owned',
  'ioredis, app-owned',
] as const;
export type ClusterClient = (typeof CLUSTER_CLIENTS)[number];

/** Budgets for fault tests: small enough that a downed master is noticed at once, with room for a loaded CI box. */
export const FAST_FAILURE = {
  commandTimeoutMs: 200,
  reconnectCooldownMs: 200,
  connectTimeoutMs: 1000,
} as const;

export const quietLogger = { warn: () => {}, error: () => {} };

/**
 * A RedisStore on `cluster` through `client`, with a key prefix of its own: suites share one cluster (and maybe an
 * external TEST_REDIS_CLUSTER_NODES one across runs), and a private prefix lets them count exactly their own keys.
 */
export async function openClusterStore(
  client: ClusterClient,
  cluster: RedisCluster,
  options: Omit<RedisStoreOptions, 'client' | 'rootNodes' | 'keyPrefix'> = {},
): Promise<RedisFixture> {
  // Latency is not what most suites test: a loaded CI box must not turn a slow answer into a degraded one.
  // Fault tests pass FAST_FAILURE to override.
  options = { commandTimeoutMs: 5000, ...options };
  const keyPrefix = `tg-${randomUUID().slice(0, 8)}:`;
  const rootNodes = cluster.rootNodes.map(({ host, port }) => ({ host, port }));
  const [root] = rootNodes;
  // redis-cli -c follows the MOVED redirect to the master that owns the key.
  const pttl = async (key: string) =>
    Number(
      await redisCli(['-c', '-h', root?.host ?? '', '-p', String(root?.port)], ['PTTL', keyPrefix + key]),
    );
  switch (client) {
    case 'ioredis, own connection': {
      const store = new RedisStore({ ...options, rootNodes, keyPrefix });
      return { store, close: () => store.close(), pttl };
    }
    case 'node-redis, app-owned': {
      const app = createCluster({
        rootNodes: rootNodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
        // Like an app that retries a lost node at its own pace; the store's timeout bounds each decision anyway.
        defaults: { socket: { reconnectStrategy: () => options.reconnectCooldownMs ?? 1000 } },
      });
      // A killed node is reported here; an unhandled 'error' event would crash the test process.
      app.on('error', () => {});
      await app.connect();
      const store = new RedisStore({ ...options, client: app, keyPrefix });
      return {
        store,
        pttl,
        close: async () => {
          await store.close();
          // destroy, not close: close() waits for replies that a killed node will never send.
          app.destroy();
        },
      };
    }
    case 'ioredis, app-owned': {
      const app = new Cluster(rootNodes, { lazyConnect: true });
      app.on('error', () => {});
      // A store given a client that is still connecting would answer its first decisions degraded.
      await app.connect();
      const store = new RedisStore({ ...options, client: app, keyPrefix });
      return {
        store,
        pttl,
        close: async () => {
          await store.close();
          app.disconnect();
        },
      };
    }
  }
}

/** Every key `store` holds (without its prefix). */
export async function keysOf(store: RedisStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.keys()) keys.push(key);
  return keys;
}

/**
 * `perMaster` identifiers of `limiter` per current master (keyed "host:port"), found by asking the cluster where
 * each candidate's bucket lives, so that a test covers every master on purpose rather than by luck.
 */
export async function idsByMaster(
  cluster: RedisCluster,
  store: RedisStore,
  limiter: Limiter,
  stem: string,
  perMaster: number,
): Promise<Map<string, string[]>> {
  const masters = await cluster.masters();
  const found = new Map(masters.map((master) => [`${master.host}:${master.port}`, [] as string[]]));
  for (let i = 0; [...found.values()].some((ids) => ids.length < perMaster); i++) {
    if (i > 1000) {
      const counts = [...found].map(([master, ids]) => `${master}: ${ids.length}`).join(', ');
      throw new Error(`no ${perMaster} identifiers per master among 1000 candidates (${counts})`);
    }
    const id = `${stem}-${i}`;
    const key = store.keyPrefix + (bucketKeys(limiter.scope, id, limiter.policies)[0] as string);
    const owner = await cluster.masterForKey(key);
    const ids = found.get(`${owner.host}:${owner.port}`);
    if (ids !== undefined && ids.length < perMaster) ids.push(id);
  }
  return found;
}
