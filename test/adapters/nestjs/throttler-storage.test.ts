// The drop-in beside @nestjs/throttler on Fastify, with a storage of the app's own, and on Tollgate's stores.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { normalizeIp } from '../../../src/adapters/nestjs/throttler/index.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../../harness/redis-server.js';
import { describeWithRedis } from '../../harness/suite.js';
import { burst, type Case, FASTIFY, runSideBySide, startApp } from './throttler-harness.js';
import { original } from './throttler-original.js';

const named: Case = {
  name: 'named throttlers, overrides and skips',
  options: () => [
    { name: 'short', ttl: 1000, limit: 2 },
    { ttl: 10_000, limit: 4, blockDuration: 15_000 },
  ],
  steps: [
    ...burst('/plain', 3),
    ...burst('/plain', 3, 1000),
    ...burst('/strict', 2),
    ...burst('/skip-short', 2),
    ...burst('/class/own', 5, 9000),
    ...burst('/skipping/again', 2),
    ...burst('/plain', 2, 15_000),
  ],
};

/** A storage written for @nestjs/throttler: records each call, and answers from a count of its own. */
class RecordingStorage {
  readonly calls: unknown[][] = [];
  async increment(key: string, ttl: number, limit: number, blockDuration: number, name: string) {
    this.calls.push([key, ttl, limit, blockDuration, name]);
    const totalHits = this.calls.filter(([k, , , , n]) => k === key && n === name).length;
    const isBlocked = totalHits > limit;
    return { totalHits, timeToExpire: ttl / 1000, isBlocked, timeToBlockExpire: isBlocked ? 7 : 0 };
  }
}

describe('@nestjs/throttler and tollgate/nestjs-throttler side by side', () => {
  it('on Fastify', () => runSideBySide({ ...named, platform: FASTIFY }).then(() => {}));

  it('given the same storage of the app’s own, which each calls alike', async () => {
    const storages = [new RecordingStorage(), new RecordingStorage()];
    await runSideBySide(named, (api, index) => startApp(api, named, { storage: storages[index] }));
    assert.ok((storages[0] as RecordingStorage).calls.length > 20);
    assert.deepEqual((storages[1] as RecordingStorage).calls, (storages[0] as RecordingStorage).calls);
  });

  it('with a Tollgate MemoryStore as storage', async () => {
    const stores: MemoryStore[] = [];
    await runSideBySide(named, (api, index) => {
      if (index === 0) return startApp(api, named);
      stores.push(new MemoryStore({ clock: () => Date.now() }));
      return startApp(api, named, { storage: stores[0] });
    });
    for (const store of stores) store.close();
  });

  it('tracks addresses as @nestjs/throttler writes them', () => {
    const addresses = [
      '1.2.3.4',
      '1.2.3.4%eth0',
      '::1',
      '0:0:0:0:0:0:0:1',
      '::',
      '::ffff:10.0.0.1',
      '::FFFF:10.0.0.1',
      '::ffff:a00:1',
      '::1.2.3.4',
      '::0.0.0.1',
      '64:ff9b::1.2.3.4',
      '2001:db8:1:2:3:4:5:6',
      '2001:DB8::1',
      '2001:0db8::1%eth0',
      'fe80::1%eth0',
      'fe80::',
      '1:0:0:1:0:0:0:1',
      'x',
      '',
    ];
    for (const prefix of [64, 48, 0, 128, 33, 127, -1, 200, Number.NaN, 12.7])
      for (const address of addresses)
        assert.equal(
          normalizeIp(address, prefix),
          original.normalizeIp(address, prefix),
          `${address} /${prefix}`,
        );
  });
});

describeWithRedis('tollgate/nestjs-throttler on a RedisStore beside @nestjs/throttler in memory', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(() => server.stop());

  for (const c of [
    named,
    { ...named, name: 'no block', options: () => [{ ttl: 2000, limit: 3, blockDuration: 0 }] },
  ])
    it(c.name, async () => {
      // Each case's clock starts at the same instant: no record of the last one may be left.
      await server.command('FLUSHALL');
      const stores: RedisStore[] = [];
      await runSideBySide(c, (api, index) => {
        if (index === 0) return startApp(api, c);
        // The store reads the test's clock rather than the server's, so both count on the same time.
        stores.push(new RedisStore({ url: server.url, clock: () => Date.now(), commandTimeoutMs: 5000 }));
        return startApp(api, c, { storage: stores[0] });
      });
      for (const store of stores) await store.close();
    });
});
