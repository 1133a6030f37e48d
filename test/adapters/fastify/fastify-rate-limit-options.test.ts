// The drop-in's wire-up: its name and decorators, its exports, Tollgate stores as `store`, and options it refuses.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import dropIn, {
  fastifyRateLimit,
  normalizeIP,
} from '../../../src/adapters/fastify/fastify-rate-limit/index.js';
import { TollgateError } from '../../../src/core/errors.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { build, SCENARIOS } from './fastify-rate-limit-cases.js';
import { originalNormalizeIP, pair, times } from './fastify-rate-limit-harness.js';

async function app(t: { after(fn: () => Promise<unknown>): void }): Promise<FastifyInstance> {
  const made = Fastify();
  t.after(() => made.close());
  return made;
}

/** A wire-up error: Tollgate's configuration error, naming the option. */
function refused(option: string) {
  return (error: unknown) => {
    assert.ok(error instanceof TollgateError, String(error));
    assert.equal(error.code, 'ERR_TOLLGATE_CONFIG');
    assert.equal(error.option, option);
    return true;
  };
}

describe('tollgate/fastify-rate-limit wire-up', () => {
  it("is the plugin by @fastify/rate-limit's name, so plugins depending on it load", async (t) => {
    const fastify = await app(t);
    await fastify.register(dropIn, { max: 1 });
    assert.ok(fastify.hasPlugin('@fastify/rate-limit'));
    assert.equal(typeof fastify.rateLimit, 'function');
    assert.equal(typeof fastify.createRateLimit, 'function');
    const dependent = Object.assign(async () => {}, {
      [Symbol.for('skip-override')]: true,
      [Symbol.for('plugin-meta')]: { name: 'needs-rate-limit', dependencies: ['@fastify/rate-limit'] },
    });
    await fastify.register(dependent);
    assert.equal(fastifyRateLimit, dropIn);
  });

  it("normalizeIP gives the plugin's keys: only ::ffff: addresses are IPv4, zone ids dropped", () => {
    const addresses = [
      ...['10.0.0.1', 'ABC', '::ffff:10.0.0.1', '::FFFF:1.2.3.4', '::ffff:a00:1', '0:0:0:0:0:ffff:1.2.3.4'],
      ...['::1.2.3.4', '::255.255.255.255', '2001:db8::1.2.3.4', '64:ff9b::1.2.3.4', '::ffff:0:1.2.3.4'],
      ...['fe80::1%eth0', 'FE80::1%ETH0', 'fe80::1%1', '::1%lo', 'fe80::1%a.1.2.3', '::ffff:1.2.3.4%eth0'],
      ...['::1.2.3.4%zz', '2001:DB8:1:2:3:4:5:6', '::1', '::', '2001:db8::'],
    ];
    for (const address of addresses)
      for (const subnet of [undefined, 0, 1, 32, 48, 64, 96, 127, 128, 129, Number.NaN])
        assert.equal(
          normalizeIP(address, subnet),
          originalNormalizeIP(address, subnet),
          `${address} /${subnet}`,
        );
  });

  it('refuses, once at wire-up, what the plugin would fail on at every request or at a route', async (t) => {
    for (const [option, value] of [
      ['timeWindow', 'soon'],
      ['store', {}],
      ['redis', {}],
      ['cache', 0],
    ] as const) {
      const fastify = await app(t);
      await assert.rejects(async () => fastify.register(dropIn, { [option]: value }), refused(option));
    }
    const routes = await app(t);
    await routes.register(dropIn);
    assert.throws(
      () => routes.get('/', { config: { rateLimit: 'yes' } as never }, async () => 'ok'),
      refused('config.rateLimit'),
    );
    assert.throws(
      () => routes.get('/g', { config: { rateLimit: { groupId: 5 } } as never }, async () => 'ok'),
      refused('groupId'),
    );
  });

  it('skipOnError lets requests through an unreachable Tollgate store, as never counted; else the error handler answers', async (t) => {
    // A port nothing listens on: every call fails at once.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, () => {
        const { port: free } = server.address() as { port: number };
        server.close(() => resolve(free));
      });
    });
    const logger = { warn: () => {}, error: () => {} };
    const store = new RedisStore({
      url: `redis://127.0.0.1:${port}`,
      commandTimeoutMs: 100,
      connectTimeoutMs: 200,
      logger,
    });
    t.after(() => store.close());
    for (const [skipOnError, status, remaining] of [
      [true, 200, '1'],
      [false, 500, undefined],
    ] as const) {
      const fastify = await app(t);
      await fastify.register(dropIn, { store, skipOnError, max: 1 });
      fastify.get('/', async () => 'ok');
      const answers = await Promise.all(times(2, '/').map(() => fastify.inject('/')));
      assert.deepEqual(
        answers.map((answer) => [answer.statusCode, answer.headers['x-ratelimit-remaining']]),
        [
          [status, remaining],
          [status, remaining],
        ],
      );
    }
  });
});

describe("a Tollgate MemoryStore given as `store` counts as the plugin's local store", () => {
  for (const scenario of SCENARIOS.filter((s) => !s.localOnly))
    it(scenario.name, async (t) => {
      const both = await pair(
        t,
        build(scenario, (_events, which) =>
          which === 'drop-in' ? { store: new MemoryStore({ autoCleanup: false }) } : {},
        ),
      );
      await both.run(scenario.steps);
    });
});
