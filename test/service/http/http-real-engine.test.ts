// The HTTP server over the real configuration loader and decision engine: the YAML's HTTP check rules, its deny
// status and raw body, and /json as the reference answers it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadServiceConfig } from '../../../src/service/config/load.js';
import { createDecider } from '../../../src/service/engine/decider.js';
import { type HttpServer, startHttpServer } from '../../../src/service/http/http-server.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';

/** Ten seconds past the minute: a minute's window resets in 50 s. */
const NOW = Date.UTC(2026, 0, 1, 12, 0, 10);

const CONFIG = `
domain: api
descriptors:
  - key: generic_key
    value: orders
    descriptors:
      - key: method
        rate_limit: { unit: minute, requests_per_unit: 2 }
tollgate:
  raw_body: "slow down\\n"
  http_check:
    deny_status: 403
    descriptors:
      - entries:
          - generic_key: { value: orders }
          - request_header: { header: X-Forwarded-Method, key: method }
`;

describe('the HTTP server over the real loader and engine', () => {
  const store = new MemoryStore({ clock: () => NOW });
  let server: HttpServer;
  let call: (path: string, init?: RequestInit) => Promise<Response>;

  before(async () => {
    const config = loadServiceConfig([{ path: 'api.yaml', text: CONFIG }]);
    const decider = createDecider({ store });
    server = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      shouldRateLimit: (request) => decider.shouldRateLimit(config, request),
      config: () => config,
      healthy: async () => ({ ok: true }),
      metricsText: () => '',
    });
    call = (path, init) => fetch(`http://127.0.0.1:${server.port}${path}`, init);
  });
  after(async () => {
    await server.close(0);
    store.close();
  });

  it('limits by the rules, denying with the configured status and raw body', async () => {
    const post = { headers: { 'X-Forwarded-Method': 'POST' } };
    const answers: number[] = [];
    for (let i = 0; i < 3; i++) answers.push((await call('/check', post)).status);
    assert.deepEqual(answers, [200, 200, 403]);
    const denied = await call('/check', post);
    assert.equal(await denied.text(), 'slow down\n');
    assert.equal(denied.headers.get('retry-after'), '50');
    assert.equal((await call('/check?deny=429', post)).status, 429);
    assert.equal((await call('/check', { headers: { 'X-Forwarded-Method': 'GET' } })).status, 200);
  });

  it('answers /json with the reference’s JSON, 429 when over the limit', async () => {
    const body = JSON.stringify({
      domain: 'api',
      descriptors: [
        {
          entries: [
            { key: 'generic_key', value: 'orders' },
            { key: 'method', value: 'PUT' },
          ],
        },
      ],
      hits_addend: 2,
    });
    const first = await call('/json', { method: 'POST', body });
    assert.equal(first.status, 200);
    const json = (await first.json()) as { overallCode: string; statuses: unknown[] };
    assert.equal(json.overallCode, 'OK');
    assert.deepEqual(json.statuses, [
      { code: 'OK', currentLimit: { requestsPerUnit: 2, unit: 'MINUTE' }, durationUntilReset: '50s' },
    ]);
    const second = await call('/json', { method: 'POST', body });
    assert.equal(second.status, 429);
    const over = (await second.json()) as { overallCode: string; rawBody: string };
    assert.equal(over.overallCode, 'OVER_LIMIT');
    assert.equal(Buffer.from(over.rawBody, 'base64').toString(), 'slow down\n');
    const refused = await call('/json', {
      method: 'POST',
      body: JSON.stringify({ domain: '', descriptors: [] }),
    });
    assert.equal(refused.status, 400);
  });

  it('refuses a string that is not well-formed Unicode (a lone surrogate) as 400, on /json and POST /check', async () => {
    // JSON can escape half a surrogate pair; no UTF-8 (what gRPC carries) can hold one.
    const lone = '"\\ud800"';
    const bodies = [
      `{"domain":"api","descriptors":[{"entries":[{"key":"generic_key","value":${lone}}]}]}`,
      `{"domain":"api","descriptors":[{"entries":[{"key":${lone},"value":"orders"}]}]}`,
      `{"domain":${lone},"descriptors":[{"entries":[{"key":"generic_key","value":"orders"}]}]}`,
    ];
    for (const path of ['/json', '/check'])
      for (const body of bodies) {
        const answer = await call(path, { method: 'POST', body });
        assert.equal(answer.status, 400, `${path} ${body}`);
        assert.match(await answer.text(), /is not well-formed Unicode/);
      }
  });
});
