// The multi-process exactness test (test/contract/exactness.ts) on a single Redis server.
import { runExactness } from '../contract/exactness.js';
import { startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

describeWithRedis('RedisStore, single server', () => {
  runExactness('a single server', async () => {
    const server = await startRedisServer();
    return { target: { url: server.url }, close: () => server.stop() };
  });
});
