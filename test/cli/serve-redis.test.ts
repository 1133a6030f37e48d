// Four `tollgate serve` processes on one Redis: concurrent calls spread across them are answered exactly the limit between them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';
import { type RlsClient, rlsClient } from '../service/runtime/rls-client.js';
import { cleanUp, limitsFolder, type Serving, serve, stop } from './serve-process.js';

const INSTANCES = 4;
const LIMIT = 25;
const CALLS = 100;

describeWithRedis('four tollgate serve processes on one Redis', () => {
  let redis: RedisServer;
  const servers: Serving[] = [];
  const clients: RlsClient[] = [];
  // Unique per run: a shared TEST_REDIS_URL server may hold counts of an earlier one.
  const domain = `fleet-${randomUUID()}`;

  before(async () => {
    redis = await startRedisServer();
    const dir = limitsFolder(domain, LIMIT);
    const env = { REDIS_URL: redis.url, REQUIRE_REDIS: '1' };
    servers.push(
      ...(await Promise.all(Array.from({ length: INSTANCES }, () => serve(['--config', dir], env)))),
    );
    clients.push(...servers.map((server) => rlsClient(server.grpcPort)));
  });

  after(async () => {
    for (const client of clients) client.close();
    cleanUp();
    await redis?.stop();
  });

  it('answers OK exactly the limit times across them, and each says it uses Redis', async () => {
    const answers = await Promise.all(
      Array.from({ length: CALLS }, (_, i) =>
        (clients[i % INSTANCES] as RlsClient).check(domain, 'client=shared'),
      ),
    );
    const ok = answers.filter((answer) => answer.overallCode === 'OK').length;
    assert.equal(ok, LIMIT);
    assert.equal(answers.length - ok, CALLS - LIMIT);
    // Every process denies once the fleet's quota is spent, whichever answered the last OK.
    for (const client of clients)
      assert.equal((await client.check(domain, 'client=shared')).overallCode, 'OVER_LIMIT');
    for (const server of servers) assert.match(server.log(), /using Redis at redis:\/\//);
  });

  it('drains each on SIGTERM and exits 0, closing its Redis connections', async () => {
    const codes = await Promise.all(servers.map((server) => stop(server.child, 'SIGTERM')));
    assert.deepEqual(codes, Array(INSTANCES).fill(0));
    for (const server of servers) assert.match(server.log(), /drained; bye/);
  });
});
