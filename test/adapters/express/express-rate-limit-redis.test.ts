// The differential cases on Redis: rate-limit-redis given to express-rate-limit and to tollgate/express-rate-limit
// alike; and Tollgate's RedisStore as `store`, answering as express-rate-limit does on its MemoryStore.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ipKeyGenerator as erlKeys, rateLimit as erlRateLimit } from 'express-rate-limit';
import { Redis } from 'ioredis';
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis';
import {
  ipKeyGenerator,
  rateLimit,
  tollgateStore,
} from '../../../src/adapters/express/express-rate-limit/index.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../../harness/redis-server.js';
import { describeWithRedis } from '../../harness/suite.js';
import { CASES } from './express-rate-limit-edge-cases.js';
import type { Answer } from './express-rate-limit-harness.js';
import { type Limit, runCase } from './express-rate-limit-sides.js';

const RESET_FIELDS = /^(x-ratelimit-reset|ratelimit-reset|retry-after)$/;

/**
 * An answer without the seconds to a window's end: rate-limit-redis reads them from Redis's TTL, which runs on the
 * real clock while the requests run on the mocked one, so each side may see a few milliseconds fewer.
 */
function timeless(answer: Answer): unknown {
  const headers = Object.fromEntries(
    Object.entries(answer.headers).map(([name, value]) => [
      name,
      RESET_FIELDS.test(name) ? '#' : value.replaceAll(/\b(reset=|t=)\d+/g, '$1#'),
    ]),
  );
  const figures =
    typeof answer.figures === 'object' && answer.figures !== null
      ? { ...answer.figures, resetTime: '#' }
      : answer.figures;
  return {
    ...answer,
    headers,
    figures,
    body: answer.body.replaceAll(/"resetTime":"[^"]*"/g, '"resetTime":"#"'),
  };
}

describeWithRedis('the differential cases on Redis', () => {
  let server: RedisServer;
  let client: Redis;
  before(async () => {
    server = await startRedisServer();
    client = new Redis(server.url);
  });
  after(async () => {
    client.disconnect();
    await server.stop();
  });

  describe('rate-limit-redis, given to both', () => {
    const redisStores = (side: string) => (index: number) =>
      new RateLimitRedisStore({
        sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as never,
        prefix: `${side}${index}:`,
      });
    for (const kase of CASES)
      it(kase.name, async (t) => {
        await server.command('FLUSHALL');
        const theirs = await runCase(
          t,
          erlRateLimit as Limit,
          { ipKeyGenerator: erlKeys },
          kase,
          redisStores('e'),
        );
        const ours = await runCase(t, rateLimit as Limit, { ipKeyGenerator }, kase, redisStores('t'));
        assert.deepEqual(ours.answers.map(timeless), theirs.answers.map(timeless));
        assert.deepEqual(ours.logs, theirs.logs, 'log lines');
      });
  });

  describe("Tollgate's RedisStore as store, beside express-rate-limit on its MemoryStore", () => {
    for (const [number, kase] of CASES.entries())
      it(kase.name, async (t) => {
        // The mocked clock: Tollgate keeps a window's start in its state, so Redis's own time is not needed.
        const redis = new RedisStore({ url: server.url, clock: () => Date.now(), commandTimeoutMs: 5000 });
        try {
          const theirs = await runCase(t, erlRateLimit as Limit, { ipKeyGenerator: erlKeys }, kase);
          const ours = await runCase(t, rateLimit as Limit, { ipKeyGenerator }, kase, (index) =>
            tollgateStore(redis, { prefix: `case${number}-${index}` }),
          );
          assert.deepEqual(ours.answers, theirs.answers);
          assert.deepEqual(ours.logs, theirs.logs, 'log lines');
        } finally {
          await redis.close();
        }
      });
  });
});
