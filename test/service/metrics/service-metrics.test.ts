// The service's metrics, read back by parsing the Prometheus text they expose.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeLabelValue } from '../../../src/service/metrics/exposition.js';
import { createServiceMetrics, OTHER_KEY } from '../../../src/service/metrics/service-metrics.js';

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

interface Parsed {
  readonly types: Map<string, string>;
  readonly helps: Map<string, string>;
  readonly samples: Sample[];
}

/** The text format read strictly: every line a HELP, a TYPE or a sample whose family was declared before it. */
function parse(text: string): Parsed {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a line feed');
  const parsed: Parsed = { types: new Map(), helps: new Map(), samples: [] };
  for (const line of text.slice(0, -1).split('\n')) {
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment !== null) {
      const [, kind, name, rest] = comment as unknown as [string, string, string, string];
      (kind === 'HELP' ? parsed.helps : parsed.types).set(name, rest);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(sample !== null, `a sample line: ${line}`);
    const [, name, labelText = '', value] = sample as unknown as [string, string, string | undefined, string];
    const family = name.replace(/_(bucket|sum|count)$/, '');
    assert.ok(parsed.types.has(name) || parsed.types.get(family) === 'histogram', `declared: ${name}`);
    parsed.samples.push({ name, labels: parseLabels(labelText), value: Number(value) });
  }
  return parsed;
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
  while (pair.lastIndex < text.length) {
    const match = pair.exec(text);
    assert.ok(match !== null, `well-formed labels: ${text}`);
    const [, name, escaped] = match as unknown as [string, string, string];
    labels[name] = escaped.replace(/\\([\\"n])/g, (_, char: string) => (char === 'n' ? '\n' : char));
  }
  return labels;
}

function value(parsed: Parsed, name: string, labels: Record<string, string> = {}): number | undefined {
  return parsed.samples.find(
    (sample) => sample.name === name && JSON.stringify(sample.labels) === JSON.stringify(labels),
  )?.value;
}

const outcome = (
  statsKey: string,
  level: 'within' | 'near' | 'over',
  hits = 1,
  shadow = false,
  fromRequest = false,
) => ({ statsKey, hits, level, shadow, fromRequest });

describe('createServiceMetrics', () => {
  it('counts each limit key’s hits as the reference does: near within, shadow over', () => {
    const metrics = createServiceMetrics();
    metrics.descriptor(outcome('edge.remote_address', 'within', 2));
    metrics.descriptor(outcome('edge.remote_address', 'near'));
    metrics.descriptor(outcome('edge.remote_address', 'over', 3));
    metrics.descriptor(outcome('edge.path_/api', 'over', 1, true));
    const parsed = parse(metrics.text());
    const key = (statsKey: string, counter: string) =>
      value(parsed, `tollgate_service_rate_limit_${counter}_total`, { key: statsKey });
    assert.deepEqual(
      ['hits', 'over_limit', 'near_limit', 'within_limit', 'shadow_mode'].map((c) =>
        key('edge.remote_address', c),
      ),
      [6, 3, 1, 3, 0],
    );
    assert.deepEqual(
      ['hits', 'over_limit', 'near_limit', 'within_limit', 'shadow_mode'].map((c) =>
        key('edge.path_/api', c),
      ),
      [1, 1, 0, 0, 1],
    );
    assert.equal(parsed.types.get('tollgate_service_rate_limit_hits_total'), 'counter');
  });

  it('escapes label values, and reads them back unchanged', () => {
    const metrics = createServiceMetrics();
    const awkward = 'edge.path_/a"b\\c\nd';
    metrics.descriptor(outcome(awkward, 'within'));
    assert.equal(escapeLabelValue(awkward), 'edge.path_/a\\"b\\\\c\\nd');
    assert.equal(value(parse(metrics.text()), 'tollgate_service_rate_limit_hits_total', { key: awkward }), 1);
  });

  it('counts keys past maxKeys together under _other', () => {
    const metrics = createServiceMetrics({ maxKeys: 2 });
    for (const user of ['a', 'b', 'c', 'd', 'a']) metrics.descriptor(outcome(`edge.user_${user}`, 'within'));
    const keys = parse(metrics.text())
      .samples.filter(({ name }) => name === 'tollgate_service_rate_limit_hits_total')
      .map(({ labels, value: count }) => [labels.key, count]);
    assert.deepEqual(keys, [
      ['edge.user_a', 2],
      ['edge.user_b', 1],
      [OTHER_KEY, 2],
    ]);
    assert.throws(() => createServiceMetrics({ maxKeys: 0 }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'maxKeys',
    });
  });

  it('gives keys made of request values their own budget, so configured keys keep their series', () => {
    const metrics = createServiceMetrics({ maxKeys: 3, maxRequestKeys: 2 });
    for (const user of ['a', 'b', 'c', 'd', 'a'])
      metrics.descriptor(outcome(`edge.user_${user}`, 'within', 1, false, true));
    for (const configured of ['edge.one', 'edge.two', 'edge.three', 'edge.four'])
      metrics.descriptor(outcome(configured, 'within'));
    const keys = parse(metrics.text())
      .samples.filter(({ name }) => name === 'tollgate_service_rate_limit_hits_total')
      .map(({ labels, value: count }) => [labels.key, count]);
    assert.deepEqual(keys, [
      ['edge.user_a', 2],
      ['edge.user_b', 1],
      [OTHER_KEY, 3],
      ['edge.one', 1],
      ['edge.two', 1],
      ['edge.three', 1],
    ]);
    assert.throws(() => createServiceMetrics({ maxRequestKeys: -1 }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'maxRequestKeys',
    });
  });

  it('counts configuration loads, requests by protocol and result, and store errors, zeros included', () => {
    const metrics = createServiceMetrics();
    metrics.configLoad(true);
    metrics.configLoad(false);
    metrics.configLoad(true);
    metrics.request('grpc', 0.3, 'ok');
    metrics.request('grpc', 0.4, 'over_limit');
    metrics.request('http', 2, 'ok');
    metrics.storeError();
    const parsed = parse(metrics.text());
    assert.equal(value(parsed, 'tollgate_service_config_loads_total', { result: 'success' }), 2);
    assert.equal(value(parsed, 'tollgate_service_config_loads_total', { result: 'error' }), 1);
    assert.equal(value(parsed, 'tollgate_service_requests_total', { protocol: 'grpc', result: 'ok' }), 1);
    assert.equal(
      value(parsed, 'tollgate_service_requests_total', { protocol: 'grpc', result: 'over_limit' }),
      1,
    );
    assert.equal(value(parsed, 'tollgate_service_requests_total', { protocol: 'json', result: 'error' }), 0);
    assert.equal(value(parsed, 'tollgate_service_store_errors_total'), 1);
  });

  it('keeps a response-time histogram per protocol in seconds, with sub-millisecond buckets', () => {
    const metrics = createServiceMetrics();
    for (const ms of [0.02, 0.07, 0.3, 4, 2000]) metrics.request('grpc', ms, 'ok');
    const parsed = parse(metrics.text());
    const name = 'tollgate_service_request_duration_seconds';
    assert.equal(parsed.types.get(name), 'histogram');
    const bucket = (le: string) => value(parsed, `${name}_bucket`, { protocol: 'grpc', le });
    assert.deepEqual(['0.000025', '0.0001', '0.0005', '0.005', '1', '+Inf'].map(bucket), [1, 2, 3, 4, 4, 5]);
    assert.equal(value(parsed, `${name}_count`, { protocol: 'grpc' }), 5);
    assert.ok(Math.abs((value(parsed, `${name}_sum`, { protocol: 'grpc' }) ?? 0) - 2.00439) < 1e-9);
    assert.equal(value(parsed, `${name}_count`, { protocol: 'json' }), 0);
    const bounds = parsed.samples
      .filter((sample) => sample.name === `${name}_bucket` && sample.labels.protocol === 'http')
      .map(({ labels }) => Number(labels.le));
    assert.deepEqual(
      bounds,
      [...bounds].sort((a, b) => a - b),
      'buckets ascend',
    );
  });
});
