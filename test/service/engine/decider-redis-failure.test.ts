// The decision engine on a Redis stopped for real: each rule's fail mode answers, and the memory one counts locally.
import assert from 'node:assert/strict';
import { afterEach, it } from 'node:test';
import { createDecider } from '../../../src/service/engine/decider.js';
import { Code, type RateLimitRequest, Unit } from '../../../src/service/protocol/messages.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { startRedisServer } from '../../harness/redis-server.js';
import { describeWithRedis } from '../../harness/suite.js';
import { headersOf, recorder, T0 } from './engine-harness.js';
import { descriptor, limitRule, stubConfig } from './stub-config.js';

const quiet = { warn: () => {}, error: () => {} };

const config = stubConfig('domain', {
  'open=1': limitRule('open1', { requestsPerUnit: 5, unit: Unit.MINUTE, failMode: 'open' }),
  'closed=1': limitRule('closed1', { requestsPerUnit: 5, unit: Unit.MINUTE, failMode: 'closed' }),
  'memory=1': limitRule('memory1', { requestsPerUnit: 2, unit: Unit.MINUTE, failMode: 'memory' }),
  'store=1': limitRule('store1', { requestsPerUnit: 5, unit: Unit.MINUTE }),
});

const request = (...entries: string[]): RateLimitRequest => ({
  domain: 'domain',
  descriptors: entries.map((e) => descriptor(e)),
  hitsAddend: 0,
});

describeWithRedis('the decision engine when Redis stops', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("answers each rule's fail mode once Redis is killed, the memory one counting in this process", async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    const clock = () => T0 + 2000;
    // The store's own fail mode (for a rule without one) is to fail open, its default.
    const store = new RedisStore({
      url: server.url,
      clock,
      logger: quiet,
      commandTimeoutMs: 150,
      reconnectCooldownMs: 200,
    });
    cleanups.push(() => store.close());
    await store.connect();
    const observer = recorder();
    const fallbackStore = new MemoryStore({ clock, autoCleanup: false });
    const decider = createDecider({ store, fallbackStore, observer });
    const all = request('open=1', 'closed=1', 'memory=1', 'store=1');

    const healthy = await decider.shouldRateLimit(config, all);
    assert.equal(healthy.overallCode, Code.OK);
    assert.deepEqual(
      healthy.statuses.map((s) => s.limitRemaining),
      [4, 4, 1, 4],
    );
    assert.equal(observer.storeErrors, 0);

    await server.kill('SIGKILL');
    const down = await decider.shouldRateLimit(config, all);
    assert.deepEqual(
      down.statuses.map((s) => [s.code, s.limitRemaining]),
      [
        [Code.OK, 0],
        [Code.OVER_LIMIT, 0],
        [Code.OK, 1],
        [Code.OK, 0],
      ],
    );
    assert.equal(down.overallCode, Code.OVER_LIMIT);
    assert.equal(headersOf(down)['Retry-After'], '1', "fail-closed advises the store's degraded retry");
    assert.equal(observer.storeErrors, 1);

    const memoryOnly = request('memory=1');
    assert.equal((await decider.shouldRateLimit(config, memoryOnly)).statuses[0]?.limitRemaining, 0);
    const over = await decider.shouldRateLimit(config, memoryOnly);
    assert.equal(over.overallCode, Code.OVER_LIMIT, 'the memory fail mode still enforces the limit');
    assert.equal(observer.storeErrors, 3);
  });
});
