// The service's HTTP server over a stand-in engine: /json as the reference answers it, health, metrics, routing,
// failures and closing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServiceObserver } from '../../../src/service/engine/observer.js';
import { Code } from '../../../src/service/protocol/messages.js';
import { countingEngine, serve, statuses } from './fake-service.js';

describe('POST /json', () => {
  const rls = (value: unknown) => ({ method: 'POST', body: JSON.stringify(value) });

  it('answers the response as JSON: 200 when OK, 429 when over the limit', async () => {
    const { call } = await serve();
    const request = { domain: 'edge', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }], hitsAddend: 5 };
    const ok = await call('/json', rls(request));
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-type'), 'application/json');
    assert.deepEqual(await ok.json(), {
      overallCode: 'OK',
      statuses: [
        { code: 'OK', currentLimit: { requestsPerUnit: 5, unit: 'MINUTE' }, durationUntilReset: '1.500s' },
      ],
      responseHeadersToAdd: [
        { key: 'RateLimit-Policy', value: '"minute";q=5;w=60' },
        { key: 'RateLimit', value: '"minute";r=0;t=2' },
      ],
    });
    const over = await call('/json', rls(request));
    assert.equal(over.status, 429);
    assert.equal(((await over.json()) as { overallCode: string }).overallCode, 'OVER_LIMIT');
  });

  it('answers 400 for bad JSON or a request the engine refuses, 500 for a response without a code', async () => {
    const refusing = async () => {
      throw Object.assign(new Error('rate limit domain must not be empty'), {
        code: 'ERR_TOLLGATE_ARGUMENT',
      });
    };
    const { call } = await serve({ shouldRateLimit: refusing });
    assert.deepEqual(
      await statuses([call('/json', { method: 'POST', body: '}' }), call('/json', { method: 'POST' })]),
      [400, 400],
    );
    const refused = await call('/json', rls({ domain: '' }));
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /domain must not be empty/);
    const empty = {
      overallCode: Code.UNKNOWN,
      statuses: [],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
    };
    const { call: unknown } = await serve({ shouldRateLimit: async () => empty });
    const answer = await unknown('/json', rls({ domain: 'd' }));
    assert.equal(answer.status, 500);
    assert.equal(await answer.text(), '{}');
  });
});

describe('routing, health, metrics and failures', () => {
  it('serves health and metrics, 404 elsewhere, 405 with Allow for a wrong method', async () => {
    let health = { ok: true } as { ok: boolean; reason?: string };
    const { call } = await serve({ healthy: async () => health });
    const ok = await call('/healthcheck');
    assert.deepEqual([ok.status, await ok.text()], [200, 'OK\n']);
    health = { ok: false, reason: 'the store does not answer' };
    const down = await call('/healthcheck');
    assert.deepEqual([down.status, await down.text()], [503, 'the store does not answer\n']);
    const metrics = await call('/metrics');
    assert.equal(metrics.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(await metrics.text(), '# metrics\n');
    assert.equal((await call('/nowhere')).status, 404);
    assert.equal((await call('//check')).status, 404);
    const wrong = await call('/json');
    assert.deepEqual([wrong.status, wrong.headers.get('allow')], [405, 'POST']);
    const post = await call('/metrics', { method: 'POST' });
    assert.deepEqual([post.status, post.headers.get('allow')], [405, 'GET, HEAD']);
  });

  it('tells the observer each deciding request’s protocol, time and result', async () => {
    const seen: [string, string][] = [];
    const observer: ServiceObserver = {
      descriptor: () => {},
      storeError: () => {},
      request: (protocol, ms, result) => {
        assert.ok(ms >= 0);
        seen.push([protocol, result]);
      },
    };
    const { call } = await serve({ observer, shouldRateLimit: countingEngine(1).shouldRateLimit });
    for (const path of ['/check', '/check', '/check?deny=1', '/healthcheck']) await call(path);
    await call('/json', { method: 'POST', body: '{"domain":"d","descriptors":[{"entries":[{"key":"k"}]}]}' });
    await call('/json');
    assert.deepEqual(seen, [
      ['http', 'ok'],
      ['http', 'over_limit'],
      ['http', 'invalid'],
      ['json', 'ok'],
      ['json', 'invalid'],
    ]);
  });

  it('answers 500 and logs when the engine fails or answers headers it cannot send, and keeps serving', async () => {
    const failing = async () => {
      throw new Error('store exploded');
    };
    const { call, logged } = await serve({ shouldRateLimit: failing });
    const failed = await call('/check');
    assert.deepEqual(
      [failed.status, await failed.text()],
      [500, 'the rate limit service failed to answer\n'],
    );
    assert.match(String(logged.errors[0]?.[0]), /store exploded/);
    const badHeader = async () => ({
      overallCode: Code.OK,
      statuses: [],
      responseHeadersToAdd: [{ key: 'X-Bad', value: 'a\nb' }],
      requestHeadersToAdd: [],
    });
    const { call: second, logged: secondLog } = await serve({ shouldRateLimit: badHeader });
    const answer = await second('/check');
    assert.equal(answer.status, 500);
    assert.equal(answer.headers.get('x-bad'), null);
    assert.equal(secondLog.errors.length, 1);
    assert.equal((await second('/healthcheck')).status, 200);
  });

  it('refuses bad options by name, and a port in use', async () => {
    await assert.rejects(serve({ port: -1 }), { code: 'ERR_TOLLGATE_CONFIG', option: 'port' });
    await assert.rejects(serve({ host: '' }), { code: 'ERR_TOLLGATE_CONFIG', option: 'host' });
    await assert.rejects(serve({ healthy: undefined as never }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'healthy',
    });
    await assert.rejects(serve({ observer: {} as never }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'observer',
    });
    const { server } = await serve();
    await assert.rejects(serve({ port: server.port }), { code: 'ERR_TOLLGATE_CONFIG', option: 'port' });
  });
});

describe('close', () => {
  it('lets a request in flight finish within the grace, then stops listening', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const engine = countingEngine(5);
    let arrived = false;
    const { server, call } = await serve({
      shouldRateLimit: async (request) => {
        arrived = true;
        await held;
        return engine.shouldRateLimit(request);
      },
    });
    const inFlight = call('/check');
    await waitFor(() => arrived);
    const closed = server.close(60_000);
    release();
    const answer = await inFlight;
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('connection'), 'close');
    await closed;
    await assert.rejects(call('/healthcheck'));
  });

  it('drops a request still in flight when the grace is over', async () => {
    let arrived = false;
    const { server, call } = await serve({
      shouldRateLimit: () => {
        arrived = true;
        return new Promise(() => {});
      },
    });
    const inFlight = call('/check');
    await waitFor(() => arrived);
    await server.close(0);
    await assert.rejects(inFlight);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
