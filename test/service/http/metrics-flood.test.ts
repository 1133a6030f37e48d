// Clients cannot grow /metrics without bound: a flood of long, distinct request values through /json, over the real
// loader, engine and metrics, leaves the page bounded and a configured limit with its own series.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadServiceConfig } from '../../../src/service/config/load.js';
import { createDecider } from '../../../src/service/engine/decider.js';
import { type HttpServer, startHttpServer } from '../../../src/service/http/http-server.js';
import { escapeLabelValue } from '../../../src/service/metrics/exposition.js';
import { createServiceMetrics } from '../../../src/service/metrics/service-metrics.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';

const CONFIG = `
domain: api
descriptors:
  - key: user
    detailed_metric: true
    rate_limit: { unit: minute, requests_per_unit: 1000 }
  - key: plan
    value: gold
    rate_limit: { unit: minute, requests_per_unit: 1000 }
`;

const MAX_KEYS = 10;
const MAX_REQUEST_KEYS = 50;
/** The longest stats key (see config/keys.ts): a label of at most this many characters, before escaping. */
const MAX_STATS_KEY = 256;
/** The longest per-key sample line: the longest family name, the label, a count of up to 15 digits. */
const MAX_KEY_LINE =
  'tollgate_service_rate_limit_within_limit_total{key=""} '.length + MAX_STATS_KEY + 15 + 1;
/** The per-key families, each a line per key. */
const KEY_FAMILIES = 5;

describe('/metrics under a flood of request values', () => {
  const store = new MemoryStore({ clock: () => Date.UTC(2026, 0, 1, 12) });
  const metrics = createServiceMetrics({ maxKeys: MAX_KEYS, maxRequestKeys: MAX_REQUEST_KEYS });
  let server: HttpServer;
  const call = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${server.port}${path}`, init);
  const ask = (...descriptors: unknown[]) =>
    call('/json', { method: 'POST', body: JSON.stringify({ domain: 'api', descriptors }) });

  before(async () => {
    const config = loadServiceConfig([{ path: 'api.yaml', text: CONFIG }]);
    const decider = createDecider({ store, observer: metrics });
    server = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      shouldRateLimit: (request) => decider.shouldRateLimit(config, request),
      config: () => config,
      healthy: async () => ({ ok: true }),
      metricsText: () => metrics.text(),
      observer: metrics,
    });
  });
  after(async () => {
    await server.close(0);
    store.close();
  });

  it('keeps the page bounded, and a configured limit its own series', async () => {
    const empty = createServiceMetrics().text().length;
    for (let i = 0; i < 4 * MAX_REQUEST_KEYS; i++) {
      const long = randomBytes(3000).toString('hex');
      const answer = await ask(
        { entries: [{ key: 'user', value: long }] },
        { entries: [{ key: `k${long}`, value: long }], limit: { requestsPerUnit: 9, unit: 'MINUTE' } },
      );
      assert.equal(answer.status, 200);
    }
    assert.equal((await ask({ entries: [{ key: 'plan', value: 'gold' }] })).status, 200);
    const page = await (await call('/metrics')).text();
    // Every request key, `_other` and the configured one; the rest of the page is the empty page's, its counts a
    // few digits longer (a slack of 1,000 characters).
    const keys = MAX_REQUEST_KEYS + 2;
    const bound = empty + 1000 + keys * KEY_FAMILIES * MAX_KEY_LINE;
    assert.ok(page.length <= bound, `${page.length} characters, bound ${bound}`);
    const series = `tollgate_service_rate_limit_hits_total{key="${escapeLabelValue('api.plan_gold')}"} 1`;
    assert.ok(page.includes(series), 'the configured limit is counted under its own key');
  });
});
