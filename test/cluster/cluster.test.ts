// RedisStore on a real Redis Cluster: contract, differential, slot safety, fan-out, scripts, exactness.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { printSteps } from '../../src/core/debug-trace.js';
import {
  type AnyPolicy,
  createLimiter,
  fixedWindow,
  slidingWindow,
  TollgateError,
  tokenBucket,
} from '../../src/index.js';
import { bucketKeys } from '../../src/stores/key.js';
import { clusterSlot } from '../../src/stores/redis/cluster-slot.js';
import { BUILT_IN_ENGINE } from '../../src/stores/redis/engine/engine.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { traceTollgate } from '../../src/telemetry/otel/index.js';
import { runStoreContract } from '../../src/testing/index.js';
import { runDifferential } from '../contract/differential.js';
import { runExactness } from '../contract/exactness.js';
import { type RedisCluster, startRedisCluster } from '../harness/redis-cluster.js';
import { redisCall } from '../harness/redis-server.js';
import { describeWithRedisCluster } from '../harness/suite.js';
import { FLOWS, type Flow, runFlow } from '../harness/trace-flows.js';
import { assertSpans, spansOf } from '../telemetry/span-views.js';
import { documentedTraces, normalized } from '../telemetry/trace-lines.js';
import {
  CLUSTER_CLIENTS,
  FAST_FAILURE,
  idsByMaster,
  keysOf,
  openClusterStore,
  quietLogger,
} from './cluster-stores.js';

const { functionName: FUNCTION_NAME } = BUILT_IN_ENGINE;

describeWithRedisCluster('RedisStore on a Redis Cluster', () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => cluster?.stop());

  /** The slot the server itself assigns to `key`. */
  const serverSlot = async (key: string): Promise<number> => {
    const [node] = cluster.nodes;
    assert.ok(node);
    return Number(await cluster.command(node, 'CLUSTER', 'KEYSLOT', key));
  };

  for (const client of CLUSTER_CLIENTS) {
    runStoreContract(
      `RedisStore on a cluster (${client})`,
      (clock) => openClusterStore(client, cluster, { clock }),
      {
        keyTtls: true,
      },
    );
  }

  runDifferential('RedisStore on a cluster', (options) =>
    openClusterStore('ioredis, own connection', cluster, options),
  );

  it("traces one request to the node that owns its key, with the key's slot", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const flow = FLOWS.find(({ name }) => name === 'Redis Cluster, allowed') as Flow;
    const views = await runFlow(flow, { rootNodes: cluster.rootNodes }, async (request) => {
      const tracing = traceTollgate({ tracerProvider: provider, identifiers: true });
      await request();
      tracing.stop();
      return spansOf(exporter.getFinishedSpans());
    });
    const store = views.find(({ name }) => name === 'tollgate.store');
    const engine = views.find(({ name }) => name === 'tollgate.engine');
    assertSpans(views, [
      ['tollgate.request', undefined, { outcome: 'next' }],
      ['tollgate.decision', 'tollgate.request', { allowed: true }],
      ['tollgate.store', 'tollgate.decision', { batch: 1 }],
      ['tollgate.engine', 'tollgate.store', { decisions: 1 }],
    ]);
    const key = String(store?.attributes.key);
    assert.equal(engine?.attributes.slot, await serverSlot(key));
    const masters = (await cluster.masters()).map(({ host, port }) => `${host}:${port}`);
    assert.ok(masters.includes(String(engine?.attributes.node)), `${engine?.attributes.node} is a master`);
    assert.equal(store?.attributes.node, engine?.attributes.node);
  });

  it('prints the debug trace of a request to the cluster as docs/architecture.md shows it', async () => {
    const flow = FLOWS.find(({ name }) => name === 'Redis Cluster, allowed') as Flow;
    const lines = await runFlow(flow, { rootNodes: cluster.rootNodes }, async (request) => {
      const printed: string[] = [];
      const stop = printSteps((line) => printed.push(line));
      await request();
      stop();
      return printed;
    });
    assert.deepEqual(lines.map(normalized), documentedTraces().get(flow.name)?.map(normalized));
  });

  describe('slot safety', () => {
    it('refuses `db` in cluster mode', () => {
      for (const db of [1, 15]) {
        assert.throws(
          () => new RedisStore({ rootNodes: cluster.rootNodes, db }),
          (error: unknown) =>
            error instanceof TollgateError &&
            error.code === 'ERR_TOLLGATE_CONFIG' &&
            error.option === 'db' &&
            error.message.includes('`db`'),
        );
      }
    });

    it("clusterSlot() agrees with the server's CLUSTER KEYSLOT", async () => {
      const braces = fc.string({
        unit: fc.constantFrom('{', '}', 'a', 'b', '|', ':', 'é', '😀'),
        maxLength: 12,
      });
      const [node] = cluster.nodes;
      assert.ok(node);
      await fc.assert(
        fc.asyncProperty(fc.oneof(braces, fc.string({ unit: 'binary', maxLength: 40 })), async (key) => {
          // A raw socket per key rather than a redis-cli process per key: hundreds of keys stay well under a second.
          assert.equal(clusterSlot(key), await redisCall(node.host, node.port, ['CLUSTER', 'KEYSLOT', key]));
        }),
        { numRuns: 400 },
      );
    });

    it('keeps every key of a multi-policy limiter in one slot, so its one script runs on one master', async () => {
      const fixture = await openClusterStore('ioredis, own connection', cluster);
      try {
        const policies = [
          tokenBucket({ capacity: 5, refillPerSecond: 1, name: 'burst' }),
          fixedWindow({ limit: 50, windowMs: '1m', name: 'minute' }),
          slidingWindow({ limit: 500, windowMs: '1h', name: 'hour' }),
        ];
        const limiter = createLimiter({ policy: policies, store: fixture.store, scope: 'multi' });
        const ids = Array.from({ length: 20 }, (_, i) => `user-${i}`);
        for (const id of ids) assert.equal((await limiter.consume(id)).degraded, undefined, id);
        const stored = new Set(await keysOf(fixture.store));
        const slots = new Set<number>();
        for (const id of ids) {
          const keys = bucketKeys('multi', id, policies).map((key) => fixture.store.keyPrefix + key);
          const idSlots = new Set(await Promise.all(keys.map(serverSlot)));
          assert.equal(idSlots.size, 1, `${id}: keys in slots ${[...idSlots]}`);
          // A multi-key EXISTS fails with CROSSSLOT unless every key is in one slot, and counts only local keys.
          const owner = await cluster.masterForKey(keys[0] as string);
          assert.equal(await cluster.command(owner, 'EXISTS', ...keys), String(keys.length), id);
          for (const key of keys) assert.ok(stored.has(key.slice(fixture.store.keyPrefix.length)), key);
          slots.add([...idSlots][0] as number);
        }
        assert.ok(slots.size > 1, 'different identifiers still spread over the cluster');
      } finally {
        await fixture.close();
      }
    });

    it('gives identifiers with braces neither the slot nor the bucket of another identifier', async () => {
      const fixture = await openClusterStore('ioredis, own connection', cluster);
      const { store } = fixture;
      // Raw, `victim}` would make the multi-policy tag `{scope|victim}`: victim's own slot; the others pick theirs.
      const hostile = ['{victim}', 'victim}', '{victim', 'a{b}c', '}{', '{}victim', 'x{victim}y', '{tg:}'];
      const limiters: [string, AnyPolicy[]][] = [
        ['braces-single', [fixedWindow({ limit: 3, windowMs: '1m' })]],
        [
          'braces-multi',
          [
            fixedWindow({ limit: 3, windowMs: '1m', name: 'minute' }),
            tokenBucket({ capacity: 10, refillPerSecond: 0, name: 'total' }),
          ],
        ],
      ];
      try {
        for (const [scope, policies] of limiters) {
          const limiter = createLimiter({ policy: policies, store, scope });
          const spend = async (id: string) => {
            const decisions = [];
            for (let i = 0; i < 4; i++) decisions.push(await limiter.consume(id));
            assert.ok(decisions.every((d) => d.degraded === undefined));
            assert.deepEqual(
              decisions.map((d) => d.allowed),
              [true, true, true, false],
              `${scope} ${JSON.stringify(id)} has a full quota of its own`,
            );
          };
          // The hostile identifiers spend first, so any shared bucket would show as a short quota for `victim`.
          for (const id of hostile) await spend(id);
          await spend('victim');

          const keyed = (id: string) => bucketKeys(scope, id, policies);
          const victimSlot = await serverSlot(store.keyPrefix + keyed('victim')[0]);
          for (const id of hostile) {
            const keys = keyed(id);
            for (const key of keys) {
              // The identifier is hashed: no brace of the caller's survives into the key...
              const own = policies.length === 1 ? key : key.replace(/^\{([^{}]+)\}:[^{}]+$/, '$1');
              assert.match(own, /^[\w-]+\|~[\w-]{27}$/, key);
              // ...so the slot is the one the store's own tag (or the whole key) dictates, not one it chose.
              const slot = await serverSlot(store.keyPrefix + key);
              assert.equal(slot, clusterSlot(policies.length === 1 ? store.keyPrefix + key : own), key);
              if (policies.length > 1) assert.notEqual(slot, victimSlot, `${id} landed on victim's slot`);
            }
          }
          const inScope = (await keysOf(store)).filter((key) => key.includes(`${scope}|`));
          assert.deepEqual(
            inScope.sort(),
            [...hostile, 'victim'].flatMap(keyed).sort(),
            'one bucket per identifier and policy, none shared',
          );
        }
      } finally {
        await fixture.close();
      }
    });
  });

  for (const client of CLUSTER_CLIENTS) {
    describe(`fan-out and scripts (${client})`, () => {
      it('scans every master once, and deletes keys on every master', async () => {
        // 200 first decisions at once each find the script missing and send it in full: generous budget, since
        // latency is not what this test is about.
        const fixture = await openClusterStore(client, cluster, { commandTimeoutMs: 5000 });
        const { store } = fixture;
        try {
          const limiter = createLimiter({
            policy: fixedWindow({ limit: 5, windowMs: '1m' }),
            store,
            scope: 'fan',
          });
          const ids = Array.from({ length: 200 }, (_, i) => `client-${i}`);
          const decisions = await Promise.all(ids.map((id) => limiter.consume(id)));
          assert.ok(decisions.every((d) => d.allowed && d.degraded === undefined));
          const expected = ids.flatMap((id) => bucketKeys('fan', id, limiter.policies)).sort();
          const scanned = await keysOf(store);
          assert.equal(scanned.length, expected.length, 'every key exactly once');
          assert.deepEqual(scanned.sort(), expected);

          const perMaster = async () => {
            const masters = await cluster.masters();
            return Promise.all(
              masters.map(async (master) => {
                const listed = await cluster.command(master, 'KEYS', `${store.keyPrefix}*`);
                return listed.split('\n').filter((line) => line !== '').length;
              }),
            );
          };
          const counts = await perMaster();
          assert.ok(counts.length >= 3 && counts.every((n) => n > 0), `keys on every master: ${counts}`);
          assert.equal(
            counts.reduce((a, b) => a + b, 0),
            expected.length,
          );

          await store.reset(scanned);
          assert.deepEqual(await keysOf(store), []);
          assert.ok(
            (await perMaster()).every((n) => n === 0),
            'deleted from every master',
          );
        } finally {
          await fixture.close();
        }
      });

      it('loads the functions flushed from every node again without a failed decision', async () => {
        const fixture = await openClusterStore(client, cluster);
        const { store } = fixture;
        try {
          const limiter = createLimiter({
            policy: tokenBucket({ capacity: 100, refillPerSecond: 1 }),
            store,
          });
          const ids = [...(await idsByMaster(cluster, store, limiter, 'script', 2)).values()].flat();
          for (let round = 1; round <= 2; round++) {
            const reloads = store.metrics.scriptReloads;
            // On the masters: each replica follows its master's flush, and refuses one of its own.
            await Promise.all(
              (await cluster.masters()).map((node) => cluster.command(node, 'FUNCTION', 'FLUSH')),
            );
            const decisions = await Promise.all(
              ids.flatMap((id) => [1, 2, 3].map(() => limiter.consume(id))),
            );
            assert.deepEqual(
              decisions.filter((d) => d.degraded !== undefined || !d.allowed),
              [],
              `round ${round}`,
            );
            // A decision that missed the library loaded it on every master.
            const masters = await cluster.masters();
            for (const master of masters) {
              assert.match(
                String(await cluster.command(master, 'FUNCTION', 'LIST', 'LIBRARYNAME', FUNCTION_NAME)),
                new RegExp(FUNCTION_NAME),
                `${master.port}`,
              );
            }
            assert.ok(store.metrics.scriptReloads > reloads, `round ${round}: loaded again`);
          }
          assert.equal(store.metrics.errors, 0);
        } finally {
          await fixture.close();
        }
      });
    });
  }

  describe('a master that refuses writes (out of memory, PING still answered)', () => {
    it('only its slots take the fail mode, its breaker stays open while the others enforce, health() says so', async (t) => {
      const fixture = await openClusterStore('ioredis, own connection', cluster, {
        ...FAST_FAILURE,
        reconnectCooldownMs: 50,
        failOpen: false,
        logger: quietLogger,
      });
      t.after(() => fixture.close());
      const { store } = fixture;
      const limiter = createLimiter({ policy: fixedWindow({ limit: 3, windowMs: '1m' }), store });
      const ids = await idsByMaster(cluster, store, limiter, 'oom', 1);
      const masters = await cluster.masters();
      const victim = masters[0] as (typeof masters)[number];
      const victimId = ids.get(`${victim.host}:${victim.port}`)?.[0] as string;
      try {
        await cluster.command(victim, 'CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
        await cluster.command(victim, 'CONFIG', 'SET', 'maxmemory', '1');
        const seen = new Map<string, [boolean, string | undefined][]>();
        // Spread over several probe intervals: time for a breaker that flaps to flap.
        for (let round = 0; round < 8; round++) {
          for (const [, [id]] of ids) {
            const d = await limiter.consume(id as string);
            seen.set(id as string, [...(seen.get(id as string) ?? []), [d.allowed, d.degraded]]);
          }
          await sleep(25);
        }
        for (const [id, decisions] of seen) {
          const expected =
            id === victimId
              ? Array.from({ length: 8 }, () => [false, 'fail-closed'])
              : Array.from({ length: 8 }, (_, i) => [i < 3, undefined]);
          assert.deepEqual(decisions, expected, id);
        }
        assert.equal(store.breakerOpen, true);
        assert.equal(store.metrics.breakerTrips, 1, 'the breaker never closed in between');
        // What the metrics export: that master's breaker open and no other, every failure one of Redis's refusals.
        const { breakers, errors } = store.stats();
        assert.deepEqual(
          breakers?.filter(({ open }) => open),
          [{ node: `${victim.host}:${victim.port}`, open: true }],
        );
        assert.deepEqual(errors, { timeout: 0, connection: 0, reply: store.metrics.errors, script: 0 });
        assert.equal((await store.health()).ok, false);
      } finally {
        await cluster.command(victim, 'CONFIG', 'SET', 'maxmemory', '0');
      }
      const deadline = Date.now() + 10_000;
      while (store.breakerOpen && Date.now() < deadline) await sleep(20);
      assert.equal(store.breakerOpen, false, 'closed once the master accepts writes again');
      assert.deepEqual([(await limiter.consume(victimId)).degraded], [undefined]);
    });
  });

  // The hot key lives on one master; every worker process discovers the cluster through its own client.
  runExactness('a cluster', async () => ({
    target: { rootNodes: cluster.rootNodes },
    // The cluster belongs to the whole file and is stopped with it.
    close: async () => {},
  }));
});
