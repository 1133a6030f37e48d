// Connection options against a real Redis: a database the server lacks is refused when it connects (never silently
// database 0), and random malformed options either build a store that works or throw ERR_TOLLGATE_CONFIG.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { createLimiter, TollgateError, tokenBucket } from '../../src/index.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const quiet = { warn: () => {}, error: () => {} };
const budgets = { commandTimeoutMs: 2000, connectTimeoutMs: 2000, reconnectCooldownMs: 100, logger: quiet };
const policy = tokenBucket({ capacity: 5, refillPerSecond: 1 });

function isConfigError(error: unknown, option?: string): boolean {
  return (
    error instanceof TollgateError &&
    error.code === 'ERR_TOLLGATE_CONFIG' &&
    (option === undefined || error.option === option) &&
    error.message.includes(`\`${error.option}\``)
  );
}

describeWithRedis('RedisStore connection options on a real server', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => server?.stop());

  const keysIn = async (db: number) => Number(await server.command('-n', String(db), 'DBSIZE'));

  it('a db the server lacks: connect() rejects naming `db`, and no decision touches database 0', async () => {
    await server.command('FLUSHALL');
    const store = new RedisStore({ url: server.url, db: 99, ...budgets });
    try {
      await assert.rejects(store.connect(), (error: unknown) => isConfigError(error, 'db'));
      const decision = await createLimiter({ policy, store }).consume('client');
      assert.equal(decision.degraded, 'fail-open');
      assert.equal(await keysIn(0), 0);
    } finally {
      await store.close();
    }
  });

  it('a db the server has is the one the buckets go to, from `db` or from the url', async () => {
    await server.command('FLUSHALL');
    for (const options of [
      { url: server.url, db: 3 },
      { url: `${server.url}/3` },
      { port: server.port, db: 3 },
    ]) {
      const store = new RedisStore({ ...options, ...budgets });
      try {
        await store.connect();
        assert.equal(
          (await createLimiter({ policy, store }).consume(`c-${Object.keys(options)}`)).degraded,
          undefined,
        );
      } finally {
        await store.close();
      }
    }
    assert.deepEqual([await keysIn(0), await keysIn(3)], [0, 3]);
  });

  it('a Unix socket through `socket.path`', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-sock-'));
    const path = join(dir, 'redis.sock');
    const local = await startRedisServer({ args: ['--unixsocket', path, '--unixsocketperm', '700'] });
    const store = new RedisStore({ socket: { path }, ...budgets });
    try {
      assert.equal((await createLimiter({ policy, store }).consume('over-a-socket')).degraded, undefined);
      assert.equal(Number(await local.command('DBSIZE')), 1);
    } finally {
      await store.close();
      await local.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('random options, some malformed: construction throws ERR_TOLLGATE_CONFIG naming one, or the store works', async () => {
    const anything = fc.oneof(
      fc.constantFrom(Number.NaN, -1, 0, 1.5, 1e12, '', ' ', 'x', null, true, [], {}, () => 1),
      fc.string({ maxLength: 8 }),
      // Never a port that something on this machine may listen on: no test writes to a server it did not start.
      fc.integer({ min: -10, max: 0 }),
      fc.integer({ min: 65_536, max: 70_000 }),
    );
    // Mostly absent or sound, sometimes malformed: most runs then hold one mistake or none.
    const either = <T>(good: fc.Arbitrary<T>) =>
      fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 6 },
        { arbitrary: good, weight: 3 },
        { arbitrary: anything, weight: 1 },
      );
    // Addresses of this server (with a database it has, or not), mixed with options malformed at random.
    const address = fc.oneof(
      fc.constantFrom<Record<string, unknown>>(
        { url: server.url },
        { url: `${server.url}/2` },
        { port: server.port },
        { host: '127.0.0.1', port: server.port, db: 15 },
        { url: server.url, db: 1 },
      ),
      fc
        .record(
          {
            url: either(fc.constantFrom(server.url, 'rediss://h:1', 'redis://:pw@h:1')),
            host: either(fc.constant('127.0.0.1')),
            port: either(fc.constant(server.port)),
            db: either(fc.constantFrom(0, 16, 99)),
          },
          { requiredKeys: [] },
        )
        // Never the default address (another server's): without a url, the port is this server's.
        .map((a) => (a.url === undefined && a.port === undefined ? { ...a, port: server.port } : a)),
    );
    const rest = fc.record(
      {
        // Sound in shape, but the server decides: a wrong password is found when connecting, not before.
        username: either(fc.constant('default')),
        password: either(fc.constant('not-the-password')),
        socket: either(fc.constantFrom({ keepAlive: 1000 }, { enableOfflineQueue: true }, { tls: {} })),
        keyPrefix: either(fc.constantFrom('rl:', 'a{b')),
        commandTimeoutMs: either(fc.constantFrom(2000, 2 ** 31)),
        minTtlSeconds: either(fc.constant(1)),
        maxTtlSeconds: either(fc.constant(3600)),
        localDenyCache: either(fc.constant(0)),
        fallback: either(fc.constantFrom('none', 'memory')),
        fallbackShare: either(fc.constant(0.5)),
        failOpen: either(fc.boolean()),
      },
      { requiredKeys: [] },
    );
    const options = fc.tuple(address, rest).map(([a, r]) => ({ ...a, ...r }));
    await fc.assert(
      fc.asyncProperty(options, async (generated) => {
        const given = Object.fromEntries(Object.entries(generated).filter(([, v]) => v !== undefined));
        // Options that name this server, a database it has and no credentials must give real decisions; others
        // (a host that does not resolve, a wrong password, TLS to a plain server) fail when connecting, soon.
        const here =
          [server.url, `${server.url}/2`, undefined].includes(given.url as string | undefined) &&
          [undefined, '127.0.0.1'].includes(given.host as string | undefined) &&
          [undefined, server.port].includes(given.port as number | undefined) &&
          given.password === undefined &&
          ((given.db as number | undefined) ?? 0) < 16 &&
          !(typeof given.socket === 'object' && given.socket !== null && 'tls' in given.socket);
        let store: RedisStore;
        try {
          store = new RedisStore({
            ...budgets,
            connectTimeoutMs: here ? 5000 : 300,
            ...given,
          } as RedisStoreOptions);
        } catch (error) {
          assert.ok(isConfigError(error), `not a configuration error: ${String(error)}`);
          return;
        }
        try {
          const decision = await createLimiter({ policy, store }).consume('client');
          assert.equal(typeof decision.allowed, 'boolean');
          if (here) assert.equal(decision.degraded, undefined, JSON.stringify(given));
        } finally {
          await store.close();
        }
      }),
      { numRuns: 250 },
    );
  });
});
