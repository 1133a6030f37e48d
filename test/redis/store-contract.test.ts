// The store contract on RedisStore, through its own ioredis connection, through an app-owned node-redis client, and
// with its engine run as a script rather than a function.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runStoreContract } from '../../src/testing/index.js';
import { scriptsOnlyClient } from '../harness/planted-client.js';
import { type RedisServer, redisCall, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

/** A key's TTL straight from the server, beside the client under test. */
const pttlOn = (server: RedisServer) => async (key: string) =>
  Number(await redisCall(server.host, server.port, ['PTTL', `tg:${key}`]));

describeWithRedis('RedisStore', () => {
  runStoreContract(
    'RedisStore (ioredis, owned connection)',
    async (clock) => {
      const server = await startRedisServer();
      // Latency is not what the contract tests: a loaded CI box must not turn a slow answer into a degraded one.
      const store = new RedisStore({ url: server.url, clock, commandTimeoutMs: 5000 });
      const close = async () => {
        await store.close();
        await server.stop();
      };
      return { store, close, pttl: pttlOn(server) };
    },
    { keyTtls: true },
  );

  runStoreContract(
    'RedisStore (node-redis, app-owned client)',
    async (clock) => {
      const server = await startRedisServer();
      const client = createClient({ url: server.url });
      await client.connect();
      const store = new RedisStore({ client, clock, commandTimeoutMs: 5000 });
      const close = async () => {
        await store.close();
        await client.close();
        await server.stop();
      };
      return { store, close, pttl: pttlOn(server) };
    },
    { keyTtls: true },
  );

  // Redis 6, a user not allowed functions, a client without FCALL: the same engine, run as a script.
  runStoreContract(
    'RedisStore (ioredis, engine as a script)',
    async (clock) => {
      const server = await startRedisServer();
      const client = scriptsOnlyClient(new Redis(server.url));
      const store = new RedisStore({ client, clock, commandTimeoutMs: 5000 });
      const close = async () => {
        await store.close();
        client.disconnect();
        await server.stop();
      };
      return { store, close, pttl: pttlOn(server) };
    },
    { keyTtls: true },
  );
});
