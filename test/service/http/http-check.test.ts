// /check over a stand-in engine: descriptors by the domain's rules or given as JSON, the deny status, and refusals.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { describe, it } from 'node:test';
import { BY_ADDRESS, checkConfig, countingEngine, serve, statuses } from './fake-service.js';

const BY_PATH = {
  entries: [
    { type: 'generic_key', key: 'generic_key', value: 'api' },
    { type: 'request_header', key: 'path', header: 'X-Forwarded-Uri', skipIfAbsent: false },
  ],
} as const;

describe('GET /check by the rules', () => {
  it('limits each client address apart, answering 429 with the engine header fields', async () => {
    const { call, engine } = await serve();
    const from = (address: string) =>
      call('/check', { headers: { 'X-Forwarded-For': `198.51.100.1, ${address}` } });
    const answered: number[] = [];
    for (let i = 0; i < 6; i++) answered.push((await from('203.0.113.1')).status);
    assert.deepEqual(answered, [200, 200, 200, 200, 200, 429]);
    const denied = await from('203.0.113.1');
    assert.equal(denied.headers.get('retry-after'), '2');
    assert.equal(denied.headers.get('ratelimit'), '"minute";r=0;t=2');
    assert.equal(denied.headers.get('ratelimit-policy'), '"minute";q=5;w=60');
    assert.equal(await denied.text(), 'rate limit exceeded\n');
    const other = await from('203.0.113.2');
    assert.equal(other.status, 200);
    assert.equal(other.headers.get('ratelimit'), '"minute";r=4;t=2');
    assert.deepEqual(engine.requests[0], {
      domain: 'edge',
      descriptors: [{ entries: [{ key: 'remote_address', value: '203.0.113.1' }] }],
      hitsAddend: 0,
    });
  });

  it('denies with the rules’ status, or the query’s deny=403|429', async () => {
    const config = checkConfig([
      { domain: 'nginx', denyStatus: 403, descriptors: [BY_ADDRESS] },
      { domain: 'traefik', descriptors: [BY_ADDRESS] },
    ]);
    const { call } = await serve({
      config: () => config,
      shouldRateLimit: countingEngine(0).shouldRateLimit,
    });
    assert.deepEqual(
      await statuses([
        call('/check'),
        call('/check?domain=traefik'),
        call('/check?domain=traefik&deny=403'),
        call('/check?domain=nginx&deny=429'),
      ]),
      [403, 429, 403, 429],
    );
    const wrong = await call('/check?deny=500');
    assert.equal(wrong.status, 400);
    assert.match(await wrong.text(), /`deny` must be 403 or 429/);
  });

  it('checks any method under a path prefix, as Envoy ext_authz sends it', async () => {
    const config = checkConfig([{ domain: 'edge', descriptors: [BY_PATH] }]);
    const { call, engine } = await serve({ config: () => config });
    const answer = await call('/check/api/orders?x=1', {
      method: 'DELETE',
      headers: { 'X-Forwarded-Uri': '/api/orders' },
    });
    assert.equal(answer.status, 200);
    assert.deepEqual(engine.requests[0]?.descriptors, [
      {
        entries: [
          { key: 'generic_key', value: 'api' },
          { key: 'path', value: '/api/orders' },
        ],
      },
    ]);
  });

  it('allows without asking the engine when the rules build no descriptor', async () => {
    const config = checkConfig([{ domain: 'edge', descriptors: [BY_PATH] }]);
    const { call, engine } = await serve({ config: () => config });
    const answer = await call('/check');
    assert.equal(answer.status, 200);
    assert.equal(engine.requests.length, 0);
  });

  it('answers 400 without rules', async () => {
    const { call } = await serve({ config: () => checkConfig([]) });
    const none = await call('/check');
    assert.equal(none.status, 400);
    assert.match(await none.text(), /no domain has HTTP check rules, and the request gives no descriptors/);
    const unknown = await call('/check?domain=other', { method: 'POST' });
    assert.equal(unknown.status, 400);
    assert.match(await unknown.text(), /the domain "other" has no HTTP check rules/);
  });
});

describe('POST /check with descriptors as JSON', () => {
  const body = (value: unknown) => ({ method: 'POST', body: JSON.stringify(value) });

  it('takes the domain from the body, else the query, else the first with rules; hits_addend counts', async () => {
    const { call, engine } = await serve();
    const entries = [{ key: 'user', value: 'ada' }];
    const answers = await statuses([
      call('/check', body({ domain: 'api', descriptors: [{ entries, hits_addend: 5 }] })),
      call('/check?domain=other', body({ descriptors: [{ entries }] })),
      call('/check', body({ descriptors: [{ entries }] })),
    ]);
    assert.deepEqual(answers, [200, 200, 200]);
    assert.deepEqual(
      engine.requests.map(({ domain }) => domain),
      ['api', 'other', 'edge'],
    );
    assert.equal((await call('/check', body({ domain: 'api', descriptors: [{ entries }] }))).status, 429);
  });

  it('answers 400 for a body that is not a request, and 413 past 64 KiB', async () => {
    const { call } = await serve({ config: () => checkConfig([]) });
    const bad = await call('/check', { method: 'POST', body: '{"descriptors":[{"entries":[{"key":1}]}]}' });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /descriptors\[0\]\.entries\[0\]\.key must be a string/);
    const nameless = await call('/check', body({ descriptors: [] }));
    assert.equal(nameless.status, 400);
    assert.match(await nameless.text(), /names no domain/);
  });

  it('answers 413 to a body over 64 KiB, told by its Content-Length before it is sent', async () => {
    const { server } = await serve();
    for (const path of ['/check', '/json']) assert.equal(await announceLargeBody(server.port, path), 413);
  });
});

/** The status answered to a POST whose Content-Length is over the bound, its body never sent. */
function announceLargeBody(port: number, path: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, path, method: 'POST', headers: { 'content-length': 64 * 1024 + 1 } });
    req.on('response', (res) => {
      resolve(res.statusCode);
      req.destroy();
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}
