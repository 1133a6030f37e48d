// The decision engine on a throwaway Redis, its clock injected: the same behaviour as in memory.
import { after, before } from 'node:test';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../../harness/redis-server.js';
import { describeWithRedis } from '../../harness/suite.js';
import { countingScenarios } from './counting-scenarios.js';
import type { StoreMaker } from './engine-harness.js';
import { modeScenarios } from './mode-scenarios.js';

const quiet = { warn: () => {}, error: () => {} };

describeWithRedis('the decision engine on Redis', () => {
  let server: RedisServer;
  let tests = 0;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server.stop();
  });
  const makeStore: StoreMaker = async (clock) => {
    // A key prefix per test keeps every test's counters apart on the one server.
    const store = new RedisStore({ url: server.url, keyPrefix: `t${++tests}:`, clock, logger: quiet });
    await store.connect();
    return { store, close: () => store.close() };
  };
  countingScenarios(makeStore);
  modeScenarios(makeStore);
});
