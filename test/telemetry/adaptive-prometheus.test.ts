// tollgate/metrics for adaptive limits: each limit's limit, requests in flight and round trips, and its partitions'
// completed requests, rejections and drops, read from the limits at each scrape into a real prom-client registry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { type AdaptiveConcurrency, adaptiveConcurrency } from '../../src/adaptive/index.js';
import { mulberry32 } from '../../src/core/seeded-random.js';
import { MemoryStore } from '../../src/index.js';
import type { LocalSlot } from '../../src/policies/local-policy.js';
import { createMetrics } from '../../src/telemetry/prometheus/index.js';
import { ManualClock, StubAlgorithm } from '../adaptive/stub-algorithm.js';

/** A slot of `limit` for `partition`, which must be free. */
function admitted(limit: AdaptiveConcurrency, partition?: string): LocalSlot {
  const { slot } = limit.admit(partition);
  assert.ok(slot, `a slot for ${partition ?? 'no partition'}`);
  return slot;
}

/** Two limits, driven on a manual clock: 'api' (4, partitioned, full) and 'search' (2, one request). */
function driven() {
  const clock = new ManualClock();
  const algorithm = new StubAlgorithm(4);
  algorithm.rtt = { noLoad: 12.5 };
  const api = adaptiveConcurrency({
    name: 'api',
    algorithm,
    clock: clock.read,
    partitions: { live: 0.5, batch: 0.25 },
  });
  const searching = new StubAlgorithm(2, 'gradient2');
  searching.rtt = { short: 3, long: 4.5 };
  const search = adaptiveConcurrency({ name: 'search', algorithm: searching, clock: clock.read });
  // api: live holds its 2, batch its 1, and a request of no partition borrows the last slot.
  const live = [admitted(api, 'live'), admitted(api, 'live')];
  const batch = admitted(api, 'batch');
  const unnamed = admitted(api);
  // Full: one refused of each partition.
  assert.equal(api.admit('live').slot, undefined);
  assert.equal(api.admit('batch').slot, undefined);
  assert.equal(api.admit(undefined).slot, undefined);
  clock.advance(20);
  live[0]?.release({ status: 503 });
  batch.release({ status: 200 });
  admitted(search).release({ dropped: true });
  return { api, search, algorithm, live, unnamed };
}

describe('createMetrics with adaptive limits', () => {
  it("exports each limit's figures by limiter and partition, read at each scrape", async () => {
    const { api, search, algorithm, unnamed } = driven();
    const registry = new Registry();
    createMetrics({ registry, adaptive: [api, search] });
    const lines = (await registry.metrics()).split('\n');
    for (const line of [
      '# TYPE tollgate_adaptive_limit gauge',
      'tollgate_adaptive_limit{limiter="api"} 4',
      'tollgate_adaptive_limit{limiter="search"} 2',
      '# TYPE tollgate_adaptive_in_flight gauge',
      'tollgate_adaptive_in_flight{limiter="api",partition="live"} 1',
      'tollgate_adaptive_in_flight{limiter="api",partition="batch"} 0',
      'tollgate_adaptive_in_flight{limiter="api"} 1',
      'tollgate_adaptive_in_flight{limiter="search"} 0',
      '# TYPE tollgate_adaptive_rtt_seconds gauge',
      'tollgate_adaptive_rtt_seconds{limiter="api",kind="noLoad"} 0.0125',
      'tollgate_adaptive_rtt_seconds{limiter="search",kind="short"} 0.003',
      'tollgate_adaptive_rtt_seconds{limiter="search",kind="long"} 0.0045',
      // Released only: one of live's two, batch's one, none of the request of no partition still held.
      '# TYPE tollgate_adaptive_completed_total counter',
      'tollgate_adaptive_completed_total{limiter="api",partition="live"} 1',
      'tollgate_adaptive_completed_total{limiter="api",partition="batch"} 1',
      'tollgate_adaptive_completed_total{limiter="api"} 0',
      'tollgate_adaptive_completed_total{limiter="search"} 1',
      '# TYPE tollgate_adaptive_rejections_total counter',
      'tollgate_adaptive_rejections_total{limiter="api",partition="live"} 1',
      'tollgate_adaptive_rejections_total{limiter="api",partition="batch"} 1',
      'tollgate_adaptive_rejections_total{limiter="api"} 1',
      'tollgate_adaptive_rejections_total{limiter="search"} 0',
      '# TYPE tollgate_adaptive_drops_total counter',
      'tollgate_adaptive_drops_total{limiter="api",partition="live"} 1',
      'tollgate_adaptive_drops_total{limiter="api",partition="batch"} 0',
      'tollgate_adaptive_drops_total{limiter="api"} 0',
      'tollgate_adaptive_drops_total{limiter="search"} 1',
    ])
      assert.ok(lines.includes(line), line);

    // The limit moves, a slot frees, and a request of a partition 'search' lacks counts as one of none: the next
    // scrape reads them all.
    algorithm.limit = 6;
    algorithm.rtt = { noLoad: 10 };
    unnamed.release();
    admitted(search, 'live').release();
    const next = (await registry.metrics()).split('\n');
    for (const line of [
      'tollgate_adaptive_limit{limiter="api"} 6',
      'tollgate_adaptive_in_flight{limiter="api"} 0',
      'tollgate_adaptive_rtt_seconds{limiter="api",kind="noLoad"} 0.01',
      'tollgate_adaptive_completed_total{limiter="api",partition="live"} 1',
      'tollgate_adaptive_completed_total{limiter="api"} 1',
      'tollgate_adaptive_completed_total{limiter="search"} 2',
      'tollgate_adaptive_rejections_total{limiter="api"} 1',
    ])
      assert.ok(next.includes(line), line);
  });

  it('counts a request on its release only, never on admission or cancel, so the counter never falls', async () => {
    const api = adaptiveConcurrency({ name: 'api', algorithm: new StubAlgorithm(3), clock: () => 0 });
    const metrics = createMetrics({ adaptive: [api] });
    const scraped: number[] = [];
    const scrape = async () => {
      const line = (await metrics.registry.metrics())
        .split('\n')
        .find((text) => text.startsWith('tollgate_adaptive_completed_total{limiter="api"} '));
      scraped.push(Number(line?.split(' ')[1]));
    };
    // Between scrapes, seeded at random: admit (or be refused when full), release, cancel, or end a slot again.
    const random = mulberry32(31_337);
    const held: LocalSlot[] = [];
    const ended: LocalSlot[] = [];
    let released = 0;
    await scrape();
    for (let step = 0; step < 300; step++) {
      const roll = random();
      if (roll < 0.45) {
        const { slot } = api.admit(undefined);
        if (slot !== undefined) held.push(slot);
      } else if (roll < 0.9 && held.length > 0) {
        const slot = held.splice(Math.floor(random() * held.length), 1)[0] as LocalSlot;
        if (random() < 0.5) {
          slot.release();
          released++;
        } else slot.cancel();
        ended.push(slot);
      } else if (ended.length > 0) {
        // A slot ends once: a second release or cancel changes nothing.
        const slot = ended[Math.floor(random() * ended.length)] as LocalSlot;
        if (random() < 0.5) slot.release();
        else slot.cancel();
      }
      await scrape();
      assert.equal(scraped.at(-1), released, `step ${step}`);
    }
    // Each way a slot ends, and a refusal, was taken often.
    const refused = api.stats().partitions[0]?.rejected ?? 0;
    assert.ok(
      released > 30 && ended.length - released > 30 && refused > 10,
      `${released}/${ended.length}, ${refused}`,
    );
    assert.ok(
      scraped.every((value, i) => i === 0 || value >= (scraped[i - 1] as number)),
      'never falls',
    );
  });

  it('sits beside the store figures under the prefix; an AIMD-like limit has no round-trip series', async () => {
    const aimd = adaptiveConcurrency({ name: 'edge', algorithm: new StubAlgorithm(3, 'aimd') });
    const text = await createMetrics({
      prefix: 'app_',
      stores: [new MemoryStore({ autoCleanup: false })],
      adaptive: [aimd],
    }).registry.metrics();
    assert.deepEqual(
      text.split('\n').filter((line) => line.startsWith('# TYPE')),
      [
        '# TYPE app_decisions_total counter',
        '# TYPE app_decision_duration_seconds histogram',
        '# TYPE app_near_limit_total counter',
        '# TYPE app_store_up gauge',
        '# TYPE app_store_evictions_total counter',
        '# TYPE app_adaptive_limit gauge',
        '# TYPE app_adaptive_in_flight gauge',
        '# TYPE app_adaptive_rtt_seconds gauge',
        '# TYPE app_adaptive_completed_total counter',
        '# TYPE app_adaptive_rejections_total counter',
        '# TYPE app_adaptive_drops_total counter',
      ],
    );
    assert.doesNotMatch(text, /app_adaptive_rtt_seconds\{/);
    assert.match(text, /\napp_adaptive_limit\{limiter="edge"\} 3\n/);
    assert.match(text, /\napp_store_evictions_total\{state="live"\} 0\n/);
  });

  it('refuses what is not a list of adaptive limits each of its own name, naming the option', () => {
    const one = adaptiveConcurrency({ name: 'api', algorithm: new StubAlgorithm(2) });
    const namesake = adaptiveConcurrency({ name: 'api', algorithm: new StubAlgorithm(2) });
    for (const adaptive of [one, {}, [{}], [one, { name: 'x' }], [one, one], [one, namesake]]) {
      const registry = new Registry();
      assert.throws(() => createMetrics({ registry, adaptive: adaptive as never }), {
        code: 'ERR_TOLLGATE_CONFIG',
        option: 'adaptive',
      });
      assert.equal(registry.getMetricsAsArray().length, 0, 'nothing registered');
    }
  });
});
