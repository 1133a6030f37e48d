// A store started while a cluster master is down enforces on the live masters at once and degrades only the dead one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { createLimiter, type Decision, fixedWindow, type Limiter } from '../../src/index.js';
import { bucketKeys } from '../../src/stores/key.js';
import { clusterSlot } from '../../src/stores/redis/cluster-slot.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import {
  addressOf,
  needsOwnCluster,
  type RedisCluster,
  type RedisClusterNode,
  startRedisCluster,
} from '../harness/redis-cluster.js';
import { describeWithRedisCluster } from '../harness/suite.js';
import { quietLogger } from './cluster-stores.js';

/** The budget the store has to learn the slot map; connect() rejects past it. */
const CONNECT_TIMEOUT_MS = 1000;
/** Spread over the three masters: about a third of them on the dead one, whatever the run. */
const CLIENTS = 60;
const POLICY = fixedWindow({ limit: 1, windowMs: '1m' });
/** A prefix of this run's own, as every cluster suite's: runs never see each other's keys. */
const KEY_PREFIX = `tg-${randomUUID().slice(0, 8)}:`;
const OPTIONS = {
  keyPrefix: KEY_PREFIX,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  // Decisions asked for while the store connects wait for it within their own budget: as long as the connect
  // timeout, so that a machine loaded enough to take a few hundred milliseconds to connect (a CI box running the
  // rest of the suite) still sees them enforced, while the dead master's still time out.
  commandTimeoutMs: CONNECT_TIMEOUT_MS,
  reconnectCooldownMs: 200,
  logger: quietLogger,
} satisfies RedisStoreOptions;
const skip = needsOwnCluster('kills a node');

type Root = { readonly host: string; readonly port: number };
type ClientKind = 'ioredis, own connection' | 'ioredis, app-owned' | 'node-redis, app-owned';

interface Started {
  readonly store: RedisStore;
  /** Settles once the store may decide: the store's own connect(), or the application's client connected. */
  readonly ready: Promise<unknown>;
  readonly close: () => Promise<void>;
}

/** What one client's two consumes came to: allowed, and by whom ('redis', or the fail mode). */
type Outcome = [boolean, string, boolean, string];

function orderings<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    orderings([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/**
 * A fresh store on the cluster, its root nodes in `order`. The store's own connection takes traffic from its first
 * moment, as an instance joining a fleet does, while connect() runs; an application's client is connected by the
 * application first, configured so that a master that is down cannot hold that up (see docs/cluster.md).
 */
async function startStore(kind: ClientKind, order: readonly Root[]): Promise<Started> {
  switch (kind) {
    case 'ioredis, own connection': {
      const store = new RedisStore({ ...OPTIONS, rootNodes: [...order] });
      return { store, ready: store.connect(), close: () => store.close() };
    }
    case 'ioredis, app-owned': {
      const app = new Cluster([...order], { lazyConnect: true, enableReadyCheck: false });
      app.on('error', () => {});
      await app.connect();
      const store = new RedisStore({ ...OPTIONS, client: app });
      return { store, ready: Promise.resolve(), close: async () => closeBoth(store, () => app.disconnect()) };
    }
    case 'node-redis, app-owned': {
      const app = createCluster({
        rootNodes: order.map((root) => ({ url: `redis://${addressOf(root)}` })),
        minimizeConnections: true,
        defaults: { socket: { reconnectStrategy: () => OPTIONS.reconnectCooldownMs } },
      });
      app.on('error', () => {});
      await app.connect();
      const store = new RedisStore({ ...OPTIONS, client: app });
      return { store, ready: Promise.resolve(), close: async () => closeBoth(store, () => app.destroy()) };
    }
  }
}

async function closeBoth(store: RedisStore, closeApp: () => void): Promise<void> {
  try {
    await store.close();
  } finally {
    closeApp();
  }
}

interface Mode {
  readonly limiter: Limiter;
  readonly failOpen: boolean;
}

/** A limiter of each fail mode on `store`, each with a scope of its own. */
function limitersOn(store: RedisStore, run: string): Mode[] {
  return [true, false].map((failOpen) => {
    const scope = `${run}-${failOpen ? 'open' : 'closed'}`;
    return { limiter: createLimiter({ policy: POLICY, store, scope, failOpen }), failOpen };
  });
}

const outcome = (first: Decision, second: Decision): Outcome => [
  first.allowed,
  first.degraded ?? 'redis',
  second.allowed,
  second.degraded ?? 'redis',
];

/**
 * Two consumes of each client under each limiter, clients concurrently, keyed by scope and identifier; `alongside`
 * runs beside the first consumes.
 */
async function consumeTwice(
  modes: readonly Mode[],
  alongside: Promise<unknown>,
): Promise<Map<string, Outcome>> {
  const clients = modes.flatMap(({ limiter }) =>
    Array.from({ length: CLIENTS }, (_, i) => ({ key: `${limiter.scope} c${i}`, limiter, id: `c${i}` })),
  );
  const [, outcomes] = await Promise.all([
    alongside,
    Promise.all(
      clients.map(async ({ key, limiter, id }) => {
        const first = await limiter.consume(id);
        return [key, outcome(first, await limiter.consume(id))] as const;
      }),
    ),
  ]);
  return new Map(outcomes);
}

/** What each client must see: a limit of 1 enforced on a live master, the limiter's fail mode on the dead one. */
function expected(modes: readonly Mode[], deadSlots: ReadonlySet<number>): Map<string, Outcome> {
  const outcomes = new Map<string, Outcome>();
  for (const { limiter, failOpen } of modes) {
    const mode = failOpen ? 'fail-open' : 'fail-closed';
    for (let i = 0; i < CLIENTS; i++) {
      const key = KEY_PREFIX + (bucketKeys(limiter.scope, `c${i}`, limiter.policies)[0] as string);
      const onDead = deadSlots.has(clusterSlot(key));
      outcomes.set(
        `${limiter.scope} c${i}`,
        onDead ? [failOpen, mode, failOpen, mode] : [true, 'redis', false, 'redis'],
      );
    }
  }
  return outcomes;
}

/** The nodes whose breaker is open ('' for the one that stands for the whole cluster). */
function openBreakers(store: RedisStore): string[] {
  return (store.stats().breakers ?? []).filter((breaker) => breaker.open).map((breaker) => breaker.node);
}

describeWithRedisCluster('a store started while a cluster master is down', () => {
  let cluster: RedisCluster;
  let dead: RedisClusterNode;
  let deadSlots: ReadonlySet<number>;
  /** The dead master first, then the live ones, as host and port: what an ordering of root nodes picks from. */
  let roots: Root[];
  before(async () => {
    if (skip) return;
    // No replicas: the killed master's slots stay down for the whole file, as with a master that has none.
    cluster = await startRedisCluster({ replicasPerMaster: 0 });
    const masters = await cluster.masters();
    [dead] = masters as [RedisClusterNode];
    roots = masters.map(({ host, port }) => ({ host, port }));
    deadSlots = new Set(await cluster.slotsOf(dead));
    // One decision while all is well, so that the stores below are not also this process's first (its modules
    // loaded and compiled within a decision's budget on a busy machine).
    const warm = new RedisStore({ ...OPTIONS, rootNodes: roots });
    await createLimiter({ policy: POLICY, store: warm, scope: 'warm-up' }).consume('warm-up');
    await warm.close();
    await cluster.killNode(dead);
  });
  after(async () => cluster?.stop());

  /** Each store starts on masters that lack the engine, as on a fresh cluster: it is loaded during the outage. */
  const flushLiveMasters = () =>
    Promise.all(
      cluster.nodes.filter((node) => node !== dead).map((node) => cluster.command(node, 'FUNCTION', 'FLUSH')),
    );

  const kinds: ClientKind[] = ['ioredis, own connection', 'ioredis, app-owned', 'node-redis, app-owned'];
  for (const kind of kinds) {
    for (const positions of orderings([0, 1, 2])) {
      const named = positions.map((p) => (p === 0 ? 'dead' : `live ${p}`)).join(', ');
      it(`${kind}, root nodes ${named}: the live masters enforce, the dead one degrades`, {
        skip,
      }, async (t) => {
        await flushLiveMasters();
        const started = await startStore(
          kind,
          positions.map((p) => roots[p] as Root),
        );
        t.after(started.close);
        const run = `${kind.replace(/\W+/g, '-')}-${positions.join('')}`;
        const modes = limitersOn(started.store, run);
        const outcomes = await consumeTwice(modes, started.ready);
        assert.deepEqual(outcomes, expected(modes, deadSlots));
        assert.deepEqual(
          openBreakers(started.store),
          [addressOf(dead)],
          'only the dead master is given up on',
        );
        const health = await started.store.health();
        assert.equal(health.ok, false);
        assert.ok(health.error?.startsWith(`Redis node ${addressOf(dead)} is failing`), health.error);
      });
    }
  }

  it('an app-owned cluster client that cannot get ready opens no master breaker', { skip }, async (t) => {
    // node-redis connects to every master before it is ready: with one down it never is, its connect() pending.
    await flushLiveMasters();
    const app = createCluster({
      rootNodes: cluster.rootNodes.map((root) => ({ url: `redis://${addressOf(root)}` })),
      defaults: { socket: { reconnectStrategy: () => OPTIONS.reconnectCooldownMs } },
    });
    app.on('error', () => {});
    const connecting = app.connect().catch(() => {});
    t.after(async () => {
      app.destroy();
      await connecting;
    });
    // It knows the slot map once it has asked a live node: only then could a failure be blamed on a master.
    const deadline = Date.now() + CONNECT_TIMEOUT_MS;
    while (app.masters.length === 0) {
      assert.ok(Date.now() < deadline, 'node-redis learned no slot map');
      await sleep(10);
    }
    assert.equal(app.isReady, false);
    const store = new RedisStore({ ...OPTIONS, client: app });
    t.after(() => store.close());
    const outcomes = await consumeTwice(limitersOn(store, 'never-ready'), Promise.resolve());
    for (const [key, [, first, , second]] of outcomes) {
      assert.notEqual(first, 'redis', key);
      assert.notEqual(second, 'redis', key);
    }
    assert.deepEqual(openBreakers(store), [''], 'one breaker for the whole cluster, none for a master');
  });
});
