// One engine call per master carries decisions of many slots, and a decision whose slot moved is made on its new node.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createLimiter, tokenBucket } from '../../src/index.js';
import type { RedisStore } from '../../src/stores/redis/redis-store.js';
import type { RedisFixture } from '../contract/differential.js';
import { type RedisCluster, type RedisClusterNode, startRedisCluster } from '../harness/redis-cluster.js';
import { describeWithRedisCluster } from '../harness/suite.js';
import { CLUSTER_CLIENTS, openClusterStore } from './cluster-stores.js';
import { idsInSlots, slotOf } from './resharding-load.js';
import { masterOfSlot, moveSlots } from './slot-migration.js';

const DECISIONS = 90;
const skip =
  (process.env.TEST_REDIS_CLUSTER_NODES ?? '') === ''
    ? false
    : 'moves a slot: needs a cluster the test starts itself (unset TEST_REDIS_CLUSTER_NODES)';

const address = (node: RedisClusterNode) => `${node.host}:${node.port}`;

describeWithRedisCluster('calls to a node', () => {
  let cluster: RedisCluster;
  const fixtures: RedisFixture[] = [];

  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => {
    for (const fixture of fixtures) await fixture.close();
    await cluster?.stop();
  });

  const open = async (client: (typeof CLUSTER_CLIENTS)[number]) => {
    const fixture = await openClusterStore(client, cluster);
    fixtures.push(fixture);
    return { fixture, store: fixture.store as RedisStore };
  };

  for (const client of CLUSTER_CLIENTS) {
    it(`${client}: decisions of many slots asked together travel in a call per master`, async () => {
      const { store } = await open(client);
      const limiter = createLimiter({
        policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }),
        store,
        scope: 'spread',
      });
      // The first decision teaches the client the slot map; until then calls go slot by slot.
      await limiter.consume('warm-up');
      const { batches, batchedDecisions } = store.metrics;
      const ids = Array.from({ length: DECISIONS }, (_, i) => `client-${i}`);
      const slots = new Set(ids.map((id) => slotOf(store.keyPrefix, 'spread', id)));
      const decisions = await Promise.all(ids.map((id) => limiter.consume(id)));
      assert.ok(slots.size > 80, `the identifiers fell in ${slots.size} slots only`);
      assert.deepEqual(
        decisions.map((d) => [d.allowed, d.remaining, d.degraded]),
        ids.map(() => [true, 4, undefined]),
      );
      assert.equal(store.metrics.batchedDecisions - batchedDecisions, DECISIONS);
      // Three masters, up to 32 decisions a call: about 30 each, so one or two calls per master.
      assert.ok(store.metrics.batches - batches <= 6, `${store.metrics.batches - batches} calls`);
    });

    it(`${client}: a decision whose slot moved under a stale slot map is made on its new node`, {
      skip,
    }, async () => {
      const { store } = await open(client);
      const limiter = createLimiter({
        policy: tokenBucket({ capacity: 5, refillPerSecond: 0 }),
        store,
        scope: 'moved',
      });
      const [id = ''] = idsInSlots(store.keyPrefix, 'moved', 'id', 1);
      for (let i = 0; i < 3; i++) assert.equal((await limiter.consume(id)).allowed, true);
      const slot = slotOf(store.keyPrefix, 'moved', id);
      const from = await masterOfSlot(cluster, slot);
      const to = (await cluster.masters()).find(
        (node) => address(node) !== address(from),
      ) as RedisClusterNode;
      // The store's client still names the old master: its call there fails the key as not local, and the
      // decision goes again through the slot's redirection. Read as new there, a peek would report 4 left, not 1.
      await moveSlots(cluster, [slot], from, to, { keysPerMigrate: 10, pauseMs: 0 });
      const resent = store.metrics.resentBySlot;
      const peek = await limiter.peek(id);
      assert.deepEqual([peek.allowed, peek.remaining, peek.degraded], [true, 1, undefined]);
      const consumed = await limiter.consume(id);
      assert.deepEqual([consumed.allowed, consumed.remaining, consumed.degraded], [true, 1, undefined]);
      assert.ok(store.metrics.resentBySlot > resent, 'no decision was sent again slot by slot');
    });
  }
});
