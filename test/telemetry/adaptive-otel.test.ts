// tollgate/otel for adaptive limits: observable gauges and counters read from the limits at each collection, through
// a real OpenTelemetry MeterProvider, exactly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DataPoint, DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { type AdaptiveConcurrency, adaptiveConcurrency } from '../../src/adaptive/index.js';
import type { LocalSlot } from '../../src/policies/local-policy.js';
import { createOtelMetrics } from '../../src/telemetry/otel/index.js';
import { ManualClock, StubAlgorithm } from '../adaptive/stub-algorithm.js';

/** A reader the test collects from when it chooses (cumulative, the SDK's default). */
class CollectingReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

interface Read {
  readonly kind: string;
  /** Each point as `attribute values joined -> value`. */
  readonly points: Record<string, unknown>;
}

/** Every adaptive metric collected now, by name: its kind and unit, and its points. */
async function collect(reader: MetricReader): Promise<Record<string, Read>> {
  const { resourceMetrics, errors } = await reader.collect();
  assert.deepEqual(errors, []);
  const read: Record<string, Read> = {};
  for (const { metrics } of resourceMetrics.scopeMetrics)
    for (const metric of metrics) {
      const monotonic = 'isMonotonic' in metric && metric.isMonotonic ? ' monotonic' : '';
      read[metric.descriptor.name] = {
        kind: `${DataPointType[metric.dataPointType]}${monotonic} ${metric.descriptor.unit}`,
        points: Object.fromEntries(
          (metric.dataPoints as DataPoint<unknown>[]).map(({ attributes, value }) => [
            Object.values(attributes).join(' '),
            value,
          ]),
        ),
      };
    }
  return read;
}

function points(read: Record<string, Read>, name: string): Record<string, unknown> {
  const metric = read[name];
  assert.ok(metric, `${name} was collected`);
  return metric.points;
}

function admitted(limit: AdaptiveConcurrency, partition?: string): LocalSlot {
  const { slot } = limit.admit(partition);
  assert.ok(slot, `a slot for ${partition ?? 'no partition'}`);
  return slot;
}

function setup() {
  const reader = new CollectingReader();
  return { reader, provider: new MeterProvider({ readers: [reader] }) };
}

describe('createOtelMetrics with adaptive limits', () => {
  it("observes each limit's figures by limiter and partition, at each collection", async () => {
    const { reader, provider } = setup();
    const clock = new ManualClock();
    const algorithm = new StubAlgorithm(3, 'gradient');
    algorithm.rtt = { minimum: 2, sampled: 7.5 };
    const api = adaptiveConcurrency({
      name: 'api',
      algorithm,
      clock: clock.read,
      partitions: { live: 2 / 3 },
    });
    createOtelMetrics({ meterProvider: provider, adaptive: [api] });
    const live = [admitted(api, 'live'), admitted(api, 'live')];
    const unnamed = admitted(api);
    assert.equal(api.admit('live').slot, undefined);
    assert.equal(api.admit(undefined).slot, undefined);
    clock.advance(15);
    live[0]?.release({ status: 504 });
    unnamed.release({ status: 200 });

    const read = await collect(reader);
    assert.deepEqual(Object.fromEntries(Object.entries(read).map(([name, { kind }]) => [name, kind])), {
      // No decision was made: the SDK exports no metric without points.
      'tollgate.store.up': 'GAUGE ',
      'tollgate.adaptive.limit': 'GAUGE {request}',
      'tollgate.adaptive.in_flight': 'GAUGE {request}',
      'tollgate.adaptive.rtt': 'GAUGE s',
      'tollgate.adaptive.completed': 'SUM monotonic {request}',
      'tollgate.adaptive.rejections': 'SUM monotonic {request}',
      'tollgate.adaptive.drops': 'SUM monotonic {request}',
    });
    assert.deepEqual(points(read, 'tollgate.adaptive.limit'), { api: 3 });
    assert.deepEqual(points(read, 'tollgate.adaptive.in_flight'), { 'api live': 1, api: 0 });
    assert.deepEqual(points(read, 'tollgate.adaptive.rtt'), { 'api minimum': 0.002, 'api sampled': 0.0075 });
    // Released only: one of live's two (the other still held), and the request of no partition.
    assert.deepEqual(points(read, 'tollgate.adaptive.completed'), { 'api live': 1, api: 1 });
    assert.deepEqual(points(read, 'tollgate.adaptive.rejections'), { 'api live': 1, api: 1 });
    assert.deepEqual(points(read, 'tollgate.adaptive.drops'), { 'api live': 1, api: 0 });

    // The limit moves and the last live slot frees: the next collection reads them.
    algorithm.limit = 5;
    live[1]?.release({ dropped: true });
    const next = await collect(reader);
    assert.deepEqual(points(next, 'tollgate.adaptive.limit'), { api: 5 });
    assert.deepEqual(points(next, 'tollgate.adaptive.in_flight'), { 'api live': 0, api: 0 });
    assert.deepEqual(points(next, 'tollgate.adaptive.completed'), { 'api live': 2, api: 1 });
    assert.deepEqual(points(next, 'tollgate.adaptive.drops'), { 'api live': 2, api: 0 });
  });

  it('reads every limit once per collection, under the prefix, until close()', async () => {
    const { reader, provider } = setup();
    const edge = adaptiveConcurrency({ name: 'edge', algorithm: new StubAlgorithm(2, 'aimd') });
    const search = adaptiveConcurrency({ name: 'search', algorithm: new StubAlgorithm(4, 'vegas') });
    let reads = 0;
    const counted = (limit: AdaptiveConcurrency) => ({
      stats: () => {
        reads++;
        return limit.stats();
      },
    });
    const otel = createOtelMetrics({
      meter: provider.getMeter('app'),
      prefix: 'app.',
      adaptive: [counted(edge), counted(search)],
    });
    const atWireUp = reads;
    admitted(edge).cancel();
    admitted(search).release();
    const read = await collect(reader);
    assert.equal(reads, atWireUp + 2, 'one read of each limit for all the instruments');
    assert.deepEqual(points(read, 'app.adaptive.limit'), { edge: 2, search: 4 });
    // A slot given back unused completes nothing; neither limit has a round trip yet (nor, AIMD, ever).
    assert.deepEqual(points(read, 'app.adaptive.completed'), { edge: 0, search: 1 });
    assert.equal(read['app.adaptive.rtt'], undefined, 'no round-trip points, so no metric');
    otel.close();
    await collect(reader);
    assert.equal(reads, atWireUp + 2, 'closed: the limits are not read again');
  });

  it('counts a request on its release only, never on admission or cancel: the counter never falls', async () => {
    const { reader, provider } = setup();
    const api = adaptiveConcurrency({ name: 'api', algorithm: new StubAlgorithm(2), clock: () => 0 });
    createOtelMetrics({ meterProvider: provider, adaptive: [api] });
    const collected: unknown[] = [];
    const completed = async () =>
      collected.push(points(await collect(reader), 'tollgate.adaptive.completed').api);
    const first = admitted(api);
    const second = admitted(api);
    await completed();
    // The store denied the second request: its slot is given back unused.
    second.cancel();
    await completed();
    first.release();
    await completed();
    first.release();
    first.cancel();
    await completed();
    const third = admitted(api);
    await completed();
    third.release({ dropped: true });
    admitted(api).cancel();
    await completed();
    assert.deepEqual(collected, [0, 0, 1, 1, 1, 2]);
  });

  it('refuses what is not a list of adaptive limits each of its own name, naming the option', () => {
    const meter = setup().provider.getMeter('app');
    const one = adaptiveConcurrency({ name: 'api', algorithm: new StubAlgorithm(2) });
    const namesake = adaptiveConcurrency({ name: 'api', algorithm: new StubAlgorithm(2) });
    for (const adaptive of [one, {}, [null], [one, one], [one, namesake]])
      assert.throws(() => createOtelMetrics({ meter, adaptive: adaptive as never }), {
        code: 'ERR_TOLLGATE_CONFIG',
        option: 'adaptive',
      });
  });
});
