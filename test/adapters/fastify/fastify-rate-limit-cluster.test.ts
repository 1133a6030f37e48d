// The drop-in on a Redis Cluster: Tollgate's RedisStore, and the `redis` option with an ioredis Cluster client.
import { after, before, it } from 'node:test';
import { Cluster } from 'ioredis';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type RedisCluster, startRedisCluster } from '../../harness/redis-cluster.js';
import { describeWithRedisCluster } from '../../harness/suite.js';
import { build, SCENARIOS } from './fastify-rate-limit-cases.js';
import { pair } from './fastify-rate-limit-harness.js';

/** Scenarios whose keys spread over the cluster's slots: several clients, routes and groups. */
const SPREAD = [
  'global: max and timeWindow in ms',
  'per route:',
  'continueExceeding',
  'exponentialBackoff',
  'groupId',
  'max as an async function',
];
const spread = SCENARIOS.filter((scenario) => SPREAD.some((start) => scenario.name.startsWith(start)));

describeWithRedisCluster('tollgate/fastify-rate-limit on a Redis Cluster', () => {
  let cluster: RedisCluster;
  const clients: Cluster[] = [];
  const client = () => {
    const made = new Cluster(cluster.rootNodes.map(({ host, port }) => ({ host, port })));
    clients.push(made);
    return made;
  };
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => {
    for (const made of clients) made.disconnect();
    await cluster.stop();
  });

  for (const [i, scenario] of spread.entries()) {
    it(`Tollgate's RedisStore, as the plugin's local store: ${scenario.name}`, async (t) => {
      const store = new RedisStore({ client: client(), keyPrefix: `c${i}:`, clock: () => Date.now() });
      t.after(() => store.close());
      const both = await pair(
        t,
        build(scenario, (_events, which) => (which === 'drop-in' ? { store } : {})),
      );
      await both.run(scenario.steps);
    });

    // Redis keeps the time here, so time does not move on: the scenario runs without its pauses.
    it(`the redis option with a Cluster client, as the plugin's: ${scenario.name}`, async (t) => {
      const redis = client();
      const both = await pair(
        t,
        build(scenario, (_events, which) => ({ redis, nameSpace: `${which}-${i}-` })),
      );
      await both.run(scenario.steps.filter((step) => typeof step !== 'object' || !('tick' in step)));
    });
  }
});
