// The drop-in on Redis: its `redis` option against the plugin's own, and Tollgate's RedisStore against the plugin's local store.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import dropIn from '../../../src/adapters/fastify/fastify-rate-limit/index.js';
import { RedisOptionStore } from '../../../src/adapters/fastify/fastify-rate-limit/redis-option.js';
import { TollgateRateLimitStore } from '../../../src/adapters/fastify/fastify-rate-limit/tollgate-store.js';
import type { ResolvedRateLimitParams } from '../../../src/adapters/fastify/fastify-rate-limit/types.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../../harness/redis-server.js';
import { describeWithRedis } from '../../harness/suite.js';
import { build, SCENARIOS } from './fastify-rate-limit-cases.js';
import { original, pair, require, T0, times } from './fastify-rate-limit-harness.js';

describeWithRedis('tollgate/fastify-rate-limit on Redis', () => {
  let server: RedisServer;
  /** One database per side, so each counts alone under the same key names. */
  const clients: Redis[] = [];
  const client = (db: number) => {
    const made = new Redis({ host: server.host, port: server.port, db });
    clients.push(made);
    return made;
  };
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    for (const made of clients) made.disconnect();
    await server.stop();
  });

  // Redis keeps the time here, so time does not move on: each scenario runs its requests without its pauses.
  for (const [i, scenario] of SCENARIOS.entries()) {
    if (scenario.showsTtl) continue;
    it(`the redis option, as the plugin's: ${scenario.name}`, async (t) => {
      const redis = [client(1), client(2)];
      const both = await pair(
        t,
        build(scenario, (_events, which) => ({
          redis: redis[which === 'original' ? 0 : 1],
          nameSpace: `s${i}-`,
        })),
      );
      await both.run(scenario.steps.filter((step) => typeof step !== 'object' || !('tick' in step)));
    });
  }

  it("the redis option shares the plugin's counters under its key names, for a move without a reset", async (t) => {
    const shared = client(3);
    const apps = [Fastify(), Fastify()];
    t.after(() => Promise.all(apps.map((app) => app.close())));
    for (const [i, plugin] of [original, dropIn].entries()) {
      const app = apps[i] ?? assert.fail();
      await app.register(plugin, { max: 3, redis: shared });
      app.get('/', async () => 'ok');
    }
    const answers = [];
    for (const app of [...apps, ...apps]) answers.push(await app.inject('/'));
    assert.deepEqual(
      answers.map(({ statusCode, headers }) => [statusCode, headers['x-ratelimit-remaining']]),
      [
        [200, '2'],
        [200, '1'],
        [200, '0'],
        [429, '0'],
      ],
    );
    assert.deepEqual(await shared.keys('fastify-rate-limit-*'), ['fastify-rate-limit-127.0.0.1']);
  });

  // Tollgate's RedisStore takes the mocked clock, so time moves on as on the plugin's local store.
  for (const [i, scenario] of SCENARIOS.entries()) {
    if (scenario.localOnly) continue;
    it(`Tollgate's RedisStore, as the plugin's local store: ${scenario.name}`, async (t) => {
      const store = new RedisStore({ client: client(4), keyPrefix: `tg${i}:`, clock: () => Date.now() });
      t.after(() => store.close());
      const both = await pair(
        t,
        build(scenario, (_events, which) => (which === 'drop-in' ? { store } : {})),
      );
      await both.run(scenario.steps);
    });
  }

  it("the redis option's store sets and reads expiries as the plugin's Redis store, in every mode", async () => {
    const redis = [client(7), client(8)] as const;
    const OriginalRedisStore = require('@fastify/rate-limit/store/RedisStore') as new (
      ...args: unknown[]
    ) => { incr: RedisOptionStore['incr'] };
    type Hit = { current: number; ttl: number };
    for (const [mode, flags] of [
      ['count', [false, false]],
      ['continue', [true, false]],
      ['backoff', [false, true]],
    ] as const) {
      const params = { continueExceeding: flags[0], exponentialBackoff: flags[1] } as ResolvedRateLimitParams;
      const stores = [
        new OriginalRedisStore(...flags, redis[0], `${mode}-`),
        new RedisOptionStore(redis[1], params, `${mode}-`),
      ];
      for (let hit = 1; hit <= 5; hit++) {
        const answers = await Promise.all(
          stores.map(
            (store) =>
              new Promise<Hit>((resolve, reject) =>
                store.incr(
                  'k',
                  (error, result) => (error ? reject(error) : resolve(result as Hit)),
                  60_000,
                  2,
                ),
              ),
          ),
        );
        const [expected, actual] = answers.map(({ current, ttl }) => [current, Math.ceil(ttl / 1000)]);
        assert.deepEqual(actual, expected, `${mode}, hit ${hit}`);
        // Time moving on, as Redis sees it: each key has 4 s left before the next hit.
        await Promise.all(redis.map((each) => each.pexpire(`${mode}-k`, 4000)));
      }
    }
  });

  it('the hit counter decides alike in memory and in Redis: hits and reads, every mode, windows from 0 ms', async () => {
    let now = T0;
    const clock = () => now;
    const redis = new RedisStore({ client: client(6), keyPrefix: 'twin:', clock });
    const memory = new MemoryStore({ clock, autoCleanup: false });
    try {
      // A fixed pseudo-random walk: which key, hit or read, how far time moves.
      let seed = 7;
      const next = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed % n;
      };
      for (const mode of [{}, { continueExceeding: true }, { exponentialBackoff: true }]) {
        const params = { ...mode } as unknown as ResolvedRateLimitParams;
        const stores = [
          TollgateRateLimitStore.over(memory, params),
          TollgateRateLimitStore.over(redis, params),
        ];
        for (let step = 0; step < 150; step++) {
          const key = `k${next(3)}`;
          const method = next(4) === 0 ? 'read' : 'incr';
          const [timeWindow, max] = [[0, 1000, 2500][next(3)] as number, next(4)];
          const answers = await Promise.all(
            stores.map(
              (store) =>
                new Promise((resolve, reject) =>
                  store[method](
                    key,
                    (error, result) => (error ? reject(error) : resolve(result)),
                    timeWindow,
                    max,
                  ),
                ),
            ),
          );
          assert.deepEqual(answers[1], answers[0], `${JSON.stringify(mode)} step ${step}: ${method} ${key}`);
          now += next(5) * 300;
        }
      }
    } finally {
      await redis.close();
    }
  });

  it("Tollgate's RedisStore counts each route's limit apart, under the plugin's nameSpace", async (t) => {
    const redis = client(5);
    const store = new RedisStore({ client: redis, keyPrefix: 'apart:', clock: () => Date.now() });
    t.after(() => store.close());
    const scenario = SCENARIOS.find((s) => s.name.startsWith('per route')) ?? assert.fail();
    const both = await pair(
      t,
      build(scenario, (_events, which) => (which === 'drop-in' ? { store, nameSpace: 'app-' } : {})),
    );
    await both.run([...times(2, '/strict'), '/', { method: 'POST', url: '/strict' }]);
    // The app-wide limit, and one per route (GET /strict and POST /strict apart).
    assert.equal((await redis.keys('apart:*')).length, 3);
  });
});
