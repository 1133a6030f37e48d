// The rate limit service on a real 3-master Redis Cluster: two instances, a reference limit and a tollgate block of
// two policies (counted atomically, in one slot), exact across both under concurrent gRPC calls.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { createRateLimitService, type RateLimitService } from '../../src/service/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { type RedisCluster, startRedisCluster } from '../harness/redis-cluster.js';
import { describeWithRedisCluster } from '../harness/suite.js';
import { type RlsClient, rlsClient } from '../service/runtime/rls-client.js';

/** Year windows and an hour's refill: nothing comes back within a run, so the totals are exact. */
const LIMITS = `domain: cluster
descriptors:
  - key: client
    rate_limit: { unit: year, requests_per_unit: 3 }
  - key: api_key
    tollgate:
      policies:
        - token_bucket: { capacity: 5, refill: { tokens: 1, period: 1h }, name: burst }
        - fixed_window: { limit: 8, period: 1d, name: daily }
`;
const KEYS = Array.from({ length: 12 }, (_, i) => `k${i}`);
const quiet = { info() {}, warn() {}, error() {} };

describeWithRedisCluster('tollgate serve on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let dir: string;
  const instances: { service: RateLimitService; store: RedisStore; client: RlsClient }[] = [];

  before(async () => {
    cluster = await startRedisCluster();
    dir = mkdtempSync(join(tmpdir(), 'tollgate-cluster-service-'));
    writeFileSync(join(dir, 'limits.yaml'), LIMITS);
    // One prefix for both instances: they share the counts, and no other suite's keys.
    const keyPrefix = `svc-${randomUUID().slice(0, 8)}:`;
    for (let i = 0; i < 2; i++) {
      const store = new RedisStore({ rootNodes: cluster.rootNodes, keyPrefix, commandTimeoutMs: 5000 });
      const service = await createRateLimitService({
        config: dir,
        store,
        grpc: { host: '127.0.0.1', port: 0 },
        http: false,
        watch: false,
        logger: quiet,
      });
      instances.push({ service, store, client: rlsClient(service.grpcPort as number) });
    }
  });

  after(async () => {
    for (const { service, store, client } of instances) {
      client.close();
      await service.close(1000);
      await store.close();
    }
    rmSync(dir, { recursive: true, force: true });
    await cluster?.stop();
  });

  /** `perKey` calls for each key, alternating between the instances, all at once: how many each key was allowed. */
  async function allowedPerKey(entry: (key: string) => string, perKey: number): Promise<number[]> {
    const calls = KEYS.flatMap((key) =>
      Array.from({ length: perKey }, (_, i) =>
        (instances[i % 2] as (typeof instances)[number]).client.check('cluster', entry(key)),
      ),
    );
    const answers = await Promise.all(calls);
    return KEYS.map(
      (_, k) =>
        answers.slice(k * perKey, (k + 1) * perKey).filter((answer) => answer.overallCode === 'OK').length,
    );
  }

  it("gives exactly a reference limit's quota per client across two instances", async () => {
    assert.deepEqual(
      await allowedPerKey((key) => `client=${key}`, 10),
      KEYS.map(() => 3),
    );
  });

  it("gives exactly a two-policy block's tightest quota, both counted in one slot", async () => {
    assert.deepEqual(
      await allowedPerKey((key) => `api_key=${key}`, 10),
      KEYS.map(() => 5),
    );
  });
});
