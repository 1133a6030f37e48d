// The concurrency limit across processes on a real 3-master Redis Cluster, on identifiers spread over every master.
import { after, before } from 'node:test';
import type { RedisStore } from '../../src/stores/redis/index.js';
import { type RedisCluster, startRedisCluster } from '../harness/redis-cluster.js';
import { describeWithRedisCluster } from '../harness/suite.js';
import { runConcurrencyLimit } from '../redis/concurrency-limit-suite.js';
import { idsByMaster } from './cluster-stores.js';

describeWithRedisCluster('RedisStore on a Redis Cluster: the concurrency limit', () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => cluster?.stop());

  // Every worker process discovers the cluster through its own connection.
  runConcurrencyLimit('a cluster', async () => ({
    target: { rootNodes: cluster.rootNodes },
    identifiers: async (limiter, stem) => {
      const ids = await idsByMaster(cluster, limiter.store as RedisStore, limiter, stem, 1);
      return [...ids.values()].flat();
    },
    // The cluster belongs to the whole file and is stopped with it.
    close: async () => {},
  }));
});
