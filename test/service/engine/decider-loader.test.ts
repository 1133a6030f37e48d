// The decision engine under a configuration the real loader read from YAML, on a MemoryStore and on Redis alike.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadServiceConfig } from '../../../src/service/config/load.js';
import { createDecider, type Decider } from '../../../src/service/engine/decider.js';
import {
  Code,
  type RateLimitDescriptor,
  type RateLimitResponse,
  Unit,
} from '../../../src/service/protocol/messages.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../../harness/redis-server.js';
import { describeWithRedis } from '../../harness/suite.js';
import { headersOf, type StoreMaker, T0 } from './engine-harness.js';
import { descriptor } from './stub-config.js';

const path = fileURLToPath(new URL('fixtures/edge.yaml', import.meta.url));
const config = loadServiceConfig([{ path: 'edge.yaml', text: readFileSync(path, 'utf8') }]);
const NOW = T0 + 2000;
const DAY_MS = 86_400_000;

function loaderScenarios(makeStore: StoreMaker): void {
  let decider: Decider;
  let close: () => Promise<void>;
  before(async () => {
    const made = await makeStore(() => NOW);
    decider = createDecider({ store: made.store });
    close = made.close;
  });
  after(() => close());
  const ask = (hitsAddend: number, ...descriptors: RateLimitDescriptor[]): Promise<RateLimitResponse> =>
    decider.shouldRateLimit(config, { domain: 'edge', descriptors, hitsAddend });
  const remaining = (response: RateLimitResponse) => response.statuses.map((s) => s.limitRemaining);

  it('counts a client to its limit and over, answering with the domain raw body', async () => {
    assert.deepEqual(remaining(await ask(0, descriptor('client=a'))), [2]);
    const first = await ask(0, descriptor('client=a'));
    assert.deepEqual(first.statuses[0]?.currentLimit, {
      name: 'per-client',
      requestsPerUnit: 3,
      unit: Unit.MINUTE,
    });
    assert.deepEqual(headersOf(first), {
      'RateLimit-Policy': '"minute";q=3;w=60',
      RateLimit: '"minute";r=1;t=58',
    });
    await ask(0, descriptor('client=a'));
    const over = await ask(0, descriptor('client=a'));
    assert.equal(over.overallCode, Code.OVER_LIMIT);
    assert.equal(new TextDecoder().decode(over.rawBody), 'Too many requests\n');
    assert.equal(headersOf(over)['Retry-After'], '58');
    assert.deepEqual(remaining(await ask(0, descriptor('client=b'))), [2], 'each client its own counter');
    assert.deepEqual(
      remaining(await ask(0, descriptor('client=partner'))),
      [9],
      'an exact value beats the key',
    );
  });

  it('leaves an unknown domain, an unknown descriptor and one deeper than the configuration unlimited', async () => {
    const other = await decider.shouldRateLimit(config, {
      domain: 'elsewhere',
      descriptors: [descriptor('client=a')],
      hitsAddend: 0,
    });
    assert.deepEqual(other.statuses, [{ code: Code.OK, limitRemaining: 0 }]);
    const unknown = await ask(0, descriptor('nothing=1'), descriptor('client=c,extra=1'));
    assert.equal(unknown.overallCode, Code.OK);
    assert.deepEqual(unknown.statuses, [
      { code: Code.OK, limitRemaining: 0 },
      { code: Code.OK, limitRemaining: 0 },
    ]);
  });

  it('answers unlimited descriptors with the greatest remaining, and lifts the limits they replace', async () => {
    const health = await ask(0, descriptor('path=/health'));
    assert.deepEqual(health.statuses, [{ code: Code.OK, limitRemaining: 4_294_967_295 }]);
    for (let i = 0; i < 5; i++) {
      const premium = await ask(0, descriptor('client=d'), descriptor('plan=premium'));
      assert.equal(premium.overallCode, Code.OK);
      assert.deepEqual(premium.statuses[0], { code: Code.OK, limitRemaining: 0 });
    }
    assert.deepEqual(
      remaining(await ask(0, descriptor('client=d'))),
      [2],
      'the lifted requests were not counted',
    );
  });

  it('refuses a ban of 0, and lets a shadow-mode limit through while reporting it', async () => {
    const ban = await ask(0, descriptor('banned=x'));
    assert.equal(ban.overallCode, Code.OVER_LIMIT);
    assert.equal(ban.statuses[0]?.durationUntilResetMs, DAY_MS - (NOW % DAY_MS));
    assert.equal(headersOf(ban)['Retry-After'], undefined);
    await ask(0, descriptor('trial=x'));
    const shadow = await ask(0, descriptor('trial=x'));
    assert.equal(shadow.overallCode, Code.OK);
    assert.equal(shadow.statuses[0]?.code, Code.OK);
    assert.equal(shadow.statuses[0]?.limitRemaining, 0);
  });

  it("adds hits, checks with a descriptor's 0, and refuses more hits than remain without counting them", async () => {
    assert.deepEqual(remaining(await ask(40, descriptor('tokens=t'))), [60]);
    assert.deepEqual(remaining(await ask(40, descriptor('tokens=t', 0))), [60], 'a check counts nothing');
    assert.equal((await ask(70, descriptor('tokens=t'))).overallCode, Code.OVER_LIMIT);
    assert.deepEqual(remaining(await ask(0, descriptor('tokens=t', 0))), [60]);
    assert.deepEqual(remaining(await ask(0, descriptor('tokens=t', 60))), [0]);
    assert.equal((await ask(0, descriptor('tokens=t', 0))).overallCode, Code.OVER_LIMIT);
  });

  it("counts a request's own limit (an override) by its entries, the same counters whatever its figures", async () => {
    const override = (requestsPerUnit: number): RateLimitDescriptor => ({
      entries: [{ key: 'client', value: 'o' }],
      limit: { requestsPerUnit, unit: Unit.SECOND },
    });
    assert.deepEqual(remaining(await ask(0, override(2))), [1]);
    assert.deepEqual(remaining(await ask(0, override(2))), [0]);
    // Raised before any denial: RedisStore's deny cache would answer a denial of this counter until its retry.
    assert.deepEqual(remaining(await ask(0, override(5))), [2], 'a raised limit counts on from 2');
    const over = await ask(0, override(2));
    assert.equal(over.overallCode, Code.OVER_LIMIT);
    assert.deepEqual(over.statuses[0]?.currentLimit, { name: '', requestsPerUnit: 2, unit: Unit.SECOND });
    assert.equal(over.statuses[0]?.durationUntilResetMs, 1000 - (NOW % 1000));
    assert.deepEqual(
      remaining(await ask(0, descriptor('client=o'))),
      [2],
      'the configured limit counts apart',
    );
  });

  it('makes a request over its quota-mode limits only when each is over', async () => {
    const tenant = (model: string) => descriptor(`model=${model},tenant=t`);
    await ask(0, tenant('m1'));
    await ask(0, tenant('m1'));
    assert.equal((await ask(0, tenant('m1'))).overallCode, Code.OVER_LIMIT, 'its only quota limit is over');
    const failover = await ask(0, tenant('m1'), tenant('m2'));
    assert.equal(failover.overallCode, Code.OK);
    assert.deepEqual(
      failover.statuses.map((s) => s.code),
      [Code.OVER_LIMIT, Code.OK],
    );
    await ask(0, tenant('m2'));
    assert.equal((await ask(0, tenant('m1'), tenant('m2'))).overallCode, Code.OVER_LIMIT);
  });

  it("reports a tollgate block's policies in the RateLimit fields, all of them enforced", async () => {
    const first = await ask(0, descriptor('api_key=k'));
    assert.deepEqual(first.statuses[0]?.currentLimit, {
      name: 'per-key',
      requestsPerUnit: 2,
      unit: Unit.MINUTE,
    });
    assert.deepEqual(headersOf(first), {
      'RateLimit-Policy': '"burst";q=2;w=60, "hourly";q=5;w=3600',
      RateLimit: '"burst";r=1;t=58, "hourly";r=4;t=3598',
    });
    await ask(0, descriptor('api_key=k'));
    const over = await ask(0, descriptor('api_key=k'));
    assert.equal(over.overallCode, Code.OVER_LIMIT);
    assert.equal(headersOf(over)['Retry-After'], '58');
  });
}

describe('the decision engine under a loaded configuration, on a MemoryStore', () => {
  loaderScenarios(async (clock) => {
    const store = new MemoryStore({ clock, autoCleanup: false });
    return { store, close: async () => store.close() };
  });
});

describeWithRedis('the decision engine under a loaded configuration, on Redis', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(() => server.stop());
  loaderScenarios(async (clock) => {
    const store = new RedisStore({ url: server.url, clock, logger: { warn: () => {}, error: () => {} } });
    await store.connect();
    return { store, close: () => store.close() };
  });
});
