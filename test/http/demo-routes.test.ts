// The demo's routes over real HTTP: those reproduced from tutorials answer in the tutorials' words, the rest as the demo's own.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createDemoApp } from '../../demo/demo-app.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { type ContractApp, listen } from '../../src/testing/adapter-contract.js';

/** The store's clock stands still: nothing refills mid-test. */
const T0 = Date.UTC(2030, 0, 1);
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('demo: route bodies', () => {
  const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
  let app: ContractApp;
  before(async () => {
    app = await listen(
      createServer(createDemoApp({ store, serverId: 'server7', logger: pino({ enabled: false }) })),
    );
  });
  after(async () => {
    await app.close();
    store.close();
  });

  /** Status, whether it carries rate-limit fields, and the parsed body of `count` requests in a row. */
  async function get(path: string, count = 1) {
    const answers: { status: number; limited: boolean; body: Record<string, unknown> }[] = [];
    for (let i = 0; i < count; i++) {
      const response = await fetch(`${app.url}${path}`, { signal: AbortSignal.timeout(5000) });
      answers.push({
        status: response.status,
        limited: response.headers.has('ratelimit-limit'),
        body: (await response.json()) as Record<string, unknown>,
      });
    }
    return answers;
  }

  it('GET /api/public-data: unlimited, {"message":"This is an unthrottled public endpoint."}', async () => {
    const answers = await get('/api/public-data', 320);
    for (const answer of answers) {
      assert.deepEqual(answer, {
        status: 200,
        limited: false,
        body: { message: 'This is an unthrottled public endpoint.' },
      });
    }
  });

  it('GET /api/sensitive-action: access granted with a timestamp, a burst of 5, then the quota message', async () => {
    const answers = await get('/api/sensitive-action', 6);
    for (const { status, limited, body } of answers.slice(0, 5)) {
      assert.deepEqual({ status, limited }, { status: 200, limited: true });
      const { timestamp, ...rest } = body;
      assert.deepEqual(rest, { success: true, data: 'Access granted to resource.' });
      assert.match(String(timestamp), ISO_8601);
    }
    assert.deepEqual(answers[5], {
      status: 429,
      limited: true,
      body: {
        error: 'Too Many Requests',
        message: 'You have exceeded your request quota. Please wait before retrying.',
      },
    });
  });

  it('GET /api/data: {"message":"Here is your data"} 10 times, then 429', async () => {
    const answers = await get('/api/data', 11);
    for (const answer of answers.slice(0, 10))
      assert.deepEqual(answer, { status: 200, limited: true, body: { message: 'Here is your data' } });
    assert.equal(answers[10]?.status, 429);
    assert.equal(answers[10]?.body.message, 'Too many requests, please try again later.');
  });

  it('every other route answers as before: ok, its route, the server and a timestamp', async () => {
    for (const path of ['/api/cheap', '/api/expensive', '/api/fixed-test', '/api/tiered']) {
      const [answer] = await get(path);
      const { timestamp, ...rest } = answer?.body ?? {};
      assert.deepEqual(rest, { ok: true, route: path, server: 'server7' }, path);
      assert.match(String(timestamp), ISO_8601, path);
    }
  });
});
