// Clients the application owns: the store waits for them to be ready, never decides degraded at start-up.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createLimiter, tokenBucket } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

describeWithRedis('app-owned clients', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => server.stop());
  const policy = tokenBucket({ capacity: 2, refillPerSecond: 1 });

  it('connect() waits for an ioredis client still connecting (created without lazyConnect)', async () => {
    const client = new Redis(server.url);
    try {
      const store = new RedisStore({ client });
      await store.connect();
      assert.equal(client.status, 'ready');
      assert.equal((await createLimiter({ policy, store }).consume('a')).degraded, undefined);
      await store.close();
    } finally {
      client.disconnect();
    }
  });

  it('the first decision waits for such a client too', async () => {
    const client = new Redis(server.url);
    try {
      const store = new RedisStore({ client });
      assert.equal((await createLimiter({ policy, store }).consume('b')).degraded, undefined);
    } finally {
      client.disconnect();
    }
  });

  it('an unconnected node-redis client is connected by the store, and left open on close()', async () => {
    const client = createClient({ url: server.url });
    try {
      const store = new RedisStore({ client });
      assert.equal((await createLimiter({ policy, store }).consume('c')).degraded, undefined);
      await store.close();
      assert.equal(client.isOpen, true, 'the application owns it');
    } finally {
      client.destroy();
    }
  });
});
