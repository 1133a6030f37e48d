// Self-test of the throwaway-Redis harness: the fault injection other suites rely on must really work.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cluster, Redis } from 'ioredis';
import { type RedisCluster, startRedisCluster } from './redis-cluster.js';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { describeWithRedis, describeWithRedisCluster, redisSkipReason } from './suite.js';

function isProcessGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

const TIMED_OUT = Symbol('timed out');

function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('redis harness skip policy', () => {
  it('reports no skip reason when redis-server is on PATH', { skip: redisSkipReason() }, () => {
    assert.equal(redisSkipReason(), undefined);
  });
});

describeWithRedis('redis-server harness', () => {
  let server: RedisServer;
  const clients: Redis[] = [];

  function connect(): Redis {
    const client = new Redis(server.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {
      // Expected while the server is being killed/restarted; assertions look at command results.
    });
    clients.push(client);
    return client;
  }

  before(async () => {
    server = await startRedisServer();
  });

  after(async () => {
    for (const client of clients) client.disconnect();
    await server?.stop();
  });

  it('answers PING and SET/GET', async () => {
    assert.match(server.url, /^redis:\/\/127\.0\.0\.1:\d+$/);
    if (!server.external) assert.notEqual(server.port, 6379, 'must never use the shared Redis');
    const client = connect();
    await client.connect();
    assert.equal(await client.ping(), 'PONG');
    assert.equal(await client.set('harness:key', 'value'), 'OK');
    assert.equal(await client.get('harness:key'), 'value');
    assert.equal(await server.command('DBSIZE'), '1');
  });

  it('command() rejects on an error reply', async () => {
    await assert.rejects(server.command('NO-SUCH-COMMAND'), /unknown command/);
  });

  it('restart() gives an empty database and script cache on the same port', async (t) => {
    if (server.external) return t.skip('needs an owned server');
    const client = connect();
    await client.connect();
    await client.set('harness:before-restart', '1');
    const sha = await server.command('SCRIPT', 'LOAD', 'return 1');
    const { port, pid } = server;
    await server.restart();
    assert.equal(server.port, port);
    assert.notEqual(server.pid, pid);
    assert.equal(await server.command('DBSIZE'), '0');
    assert.equal(await server.command('SCRIPT', 'EXISTS', sha), '0');
    const fresh = connect();
    await fresh.connect();
    assert.equal(await fresh.get('harness:before-restart'), null);
  });

  it('pause() hangs commands until resume()', async (t) => {
    if (server.external) return t.skip('needs an owned server');
    const client = connect();
    await client.connect();
    server.pause();
    const pending = client.ping();
    try {
      assert.equal(await within(pending, 300), TIMED_OUT);
    } finally {
      server.resume();
    }
    assert.equal(await within(pending, 2_000), 'PONG');
  });

  it('kill() ends the process, and restart() brings it back', async (t) => {
    if (server.external) return t.skip('needs an owned server');
    const pid = server.pid;
    assert.ok(pid !== undefined);
    await server.kill();
    assert.ok(isProcessGone(pid), `pid ${pid} should be gone`);
    await server.restart();
    const client = connect();
    await client.connect();
    assert.equal(await client.ping(), 'PONG');
  });

  it('an external server refuses fault injection and is never stopped', async () => {
    const saved = process.env.TEST_REDIS_URL;
    process.env.TEST_REDIS_URL = server.url;
    try {
      const external = await startRedisServer();
      assert.equal(external.external, true);
      assert.equal(external.pid, undefined);
      assert.equal(external.port, server.port);
      assert.throws(() => external.pause(), /TEST_REDIS_URL/);
      assert.throws(() => external.resume(), /TEST_REDIS_URL/);
      await assert.rejects(external.kill(), /TEST_REDIS_URL/);
      await assert.rejects(external.restart(), /TEST_REDIS_URL/);
      await external.stop();
      assert.equal(await external.command('PING'), 'PONG');
    } finally {
      if (saved === undefined) delete process.env.TEST_REDIS_URL;
      else process.env.TEST_REDIS_URL = saved;
    }
  });

  it('stop() is idempotent and leaves no process behind', async (t) => {
    if (server.external) return t.skip('needs an owned server');
    const pid = server.pid;
    assert.ok(pid !== undefined);
    await Promise.all([server.stop(), server.stop()]);
    await server.stop();
    assert.ok(isProcessGone(pid), `pid ${pid} should be gone`);
    await assert.rejects(server.restart(), /stopped/);
  });
});

describeWithRedisCluster('redis-cluster harness', () => {
  let cluster: RedisCluster;
  let client: Cluster;

  before(
    async () => {
      cluster = await startRedisCluster();
      client = new Cluster([...cluster.rootNodes], {
        // Fail fast and re-learn the topology quickly: a failover test should not wait on client back-off.
        clusterRetryStrategy: (times) => Math.min(50 * times, 500),
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        slotsRefreshTimeout: 1_000,
        redisOptions: { maxRetriesPerRequest: 2, connectTimeout: 1_000 },
      });
      client.on('error', () => {
        // Node errors are expected while a master is dead; the assertions check command results.
      });
      client.on('node error', () => {});
    },
    { timeout: 30_000 },
  );

  after(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('has 3 masters on distinct ports and 6 nodes', async () => {
    const masters = await cluster.masters();
    assert.equal(masters.length, 3);
    assert.equal(new Set(masters.map((node) => node.port)).size, 3);
    // An external cluster's seeds are whatever TEST_REDIS_CLUSTER_NODES listed.
    if (!cluster.external) {
      assert.equal(cluster.nodes.length, 6);
      assert.deepEqual(
        cluster.rootNodes.map((node) => node.port).sort(),
        masters.map((node) => node.port).sort(),
      );
    }
  });

  it('stores and reads back 100 keys across the masters', async () => {
    const keys = Array.from({ length: 100 }, (_, i) => `harness:cluster:${i}`);
    await Promise.all(keys.map((key, i) => client.set(key, String(i))));
    const values = await Promise.all(keys.map((key) => client.get(key)));
    assert.deepEqual(
      values,
      keys.map((_, i) => String(i)),
    );
    const owners = new Set(
      await Promise.all(keys.slice(0, 20).map(async (key) => (await cluster.masterForKey(key)).port)),
    );
    assert.ok(owners.size > 1, 'keys should spread over several masters');
  });

  it('fails over when the master owning a key dies', { timeout: 25_000 }, async (t) => {
    if (cluster.external) return t.skip('needs an owned cluster');
    const key = 'harness:failover';
    await client.set(key, 'before');
    const deadMaster = await cluster.masterForKey(key);
    const started = Date.now();
    await cluster.killNode(deadMaster);
    await cluster.waitForFailover(deadMaster);
    const failoverMs = Date.now() - started;

    const newMaster = await cluster.masterForKey(key);
    assert.notEqual(newMaster.port, deadMaster.port);
    const masters = await cluster.masters();
    assert.equal(masters.length, 3);
    assert.ok(!masters.some((node) => node.port === deadMaster.port));

    assert.equal(await client.set(key, 'after'), 'OK');
    assert.equal(await client.get(key), 'after');
    t.diagnostic(`failover took ${failoverMs} ms`);
  });
});
