// The differential test (test/contract/differential.ts) on a single Redis server.
import { RedisStore } from '../../src/stores/redis/index.js';
import { runDifferential } from '../contract/differential.js';
import { startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

describeWithRedis('RedisStore, single server', () => {
  runDifferential('RedisStore (single server)', async (options) => {
    const server = await startRedisServer();
    const store = new RedisStore({ url: server.url, commandTimeoutMs: 5000, ...options });
    const close = async () => {
      await store.close();
      await server.stop();
    };
    return { store, close };
  });
});
