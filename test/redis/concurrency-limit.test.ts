// The concurrency limit across processes on a single Redis server, and the same checks failing on a planted engine.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';
import { denialSpendsNothing } from './concurrency-limit-denial.js';
import { hammer, type LimitFixture, runConcurrencyLimit } from './concurrency-limit-suite.js';
import { openLimitStore } from './concurrency-limit-worker.js';

const IDS = ['user-0', 'user-1'];

describeWithRedis('RedisStore, single server: the concurrency limit', () => {
  runConcurrencyLimit('a single server', async () => {
    const server = await startRedisServer();
    return { target: { url: server.url }, identifiers: async () => IDS, close: () => server.stop() };
  });
});

describeWithRedis('the concurrency-limit checks against planted bugs', () => {
  let server: RedisServer;
  let fixture: LimitFixture;
  before(async () => {
    server = await startRedisServer();
    fixture = { target: { url: server.url }, identifiers: async () => IDS, close: () => server.stop() };
  });
  after(async () => server.stop());

  it('sees one holder too many when the concurrency twin admits at max holders', async () => {
    const plant = { from: 'if held + takes <= max then', to: 'if held + takes <= max + 1 then' };
    const totals = await hammer(fixture, plant);
    assert.ok(
      totals.every((total) => total.peak > 3),
      `peaks ${totals.map((total) => total.peak)} never above the limit`,
    );
  });

  it('sees the spend when a request the daily quota denies still saves the other policies', async () => {
    const unspent = "-- Nothing was spent here after all: report this policy's unspent view.\n";
    const plant = { from: unspent, to: `${unspent}        save(k, KEYS[base + k], e, 0)\n` };
    const { store, close } = await openLimitStore(fixture.target, 'tgc-planted:', {
      plant,
      localDenyCache: 0,
    });
    try {
      await assert.rejects(
        denialSpendsNothing(store, async () => IDS),
        assert.AssertionError,
      );
    } finally {
      await close();
    }
  });
});
