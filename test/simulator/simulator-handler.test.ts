// The library's simulator on plain node:http, no Express: the page from its fixed table, /api/simulate, and the live routes.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { createServer, type RequestListener, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TollgateError } from '../../src/errors.js';
import { simulate } from '../../src/simulation/index.js';
import { LIVE_ROUTES } from '../../src/simulator/live-routes.js';
import { PAGE_FILES } from '../../src/simulator/page-files.js';
import { MAX_SIMULATED_POLICIES } from '../../src/simulator/simulate-endpoint.js';
import { simulatorHandler } from '../../src/simulator/simulator-handler.js';
import { MemoryStore } from '../../src/stores/memory-store.js';

async function listen(listener: RequestListener): Promise<{ server: Server; base: string }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function close(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // fetch keeps its sockets alive; without this, close waits out the keep-alive timeout.
  server.closeAllConnections();
  await closed;
}

/** GET with the path exactly as given: fetch would resolve `..` and `%2e%2e` before sending. */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/`, { path }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });
}

function post(base: string, body: string, type = 'application/json'): Promise<Response> {
  return fetch(`${base}/api/simulate`, { method: 'POST', headers: { 'content-type': type }, body });
}

describe('simulatorHandler on node:http', () => {
  const store = new MemoryStore();
  let server: Server;
  let base: string;

  before(async () => {
    ({ server, base } = await listen(simulatorHandler({ liveStore: store })));
  });

  after(async () => {
    await close(server);
    store.close();
  });

  it('serves every file of its table with the type of its extension', async () => {
    const types = new Map([
      ['.html', /^text\/html/],
      ['.js', /^text\/javascript/],
      ['.css', /^text\/css/],
    ]);
    for (const [path, file] of [
      ...[...PAGE_FILES].map(([path, page]) => [path, page.file] as const),
      ['/?from=a-link', 'index.html'] as const,
    ]) {
      const type = types.get(extname(file));
      assert.ok(type, `no expected type for ${file}`);
      const response = await fetch(`${base}${path}`);
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-type') ?? '', type, path);
      assert.ok((await response.text()).length > 100, path);
    }
    const head = await fetch(`${base}/app.js`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  });

  it('lists every page, script and stylesheet in simulator/, so none fails to load', async () => {
    const onDisk = await readdir(new URL('../../simulator/', import.meta.url), { recursive: true });
    const listed = [...PAGE_FILES.values()].map((page) => page.file);
    assert.deepEqual(listed.toSorted(), onDisk.filter((file) => /\.(html|js|css)$/.test(file)).toSorted());
  });

  it('serves nothing outside its table, whatever the path says', async () => {
    for (const path of [
      '/index.html',
      '/vendor/uPlot.LICENSE',
      '/vendor/../app.js',
      '/%2e%2e/package.json',
      '/../package.json',
      '/api/simulate',
    ]) {
      const { status, body } = await rawGet(base, path);
      assert.equal(status, 404, path);
      assert.match(body, /not a simulator route/, path);
    }
    assert.equal((await fetch(`${base}/app.js`, { method: 'DELETE' })).status, 404);
  });

  it('runs POST /api/simulate with exactly what simulate() computes', async () => {
    const input = {
      policies: [{ kind: 'fixed-window', limit: 2, windowMs: 1000 }] as const,
      arrivals: [0, 1, 2],
    };
    const response = await post(base, JSON.stringify(input));
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await response.json(), JSON.parse(JSON.stringify(simulate(input))));
  });

  it('answers a bad scenario with 400 and the library error', async () => {
    const policies = Array.from({ length: MAX_SIMULATED_POLICIES + 1 }, () => ({
      kind: 'fixed-window',
      limit: 1,
      windowMs: 1000,
    }));
    const response = await post(base, JSON.stringify({ policies, arrivals: [0] }));
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: `at most ${MAX_SIMULATED_POLICIES} policies can be compared at once`,
      code: 'ERR_TOLLGATE_ARGUMENT',
      option: null,
    });
  });

  it('refuses a body that is not JSON with 400, and one over 1 MB with 413', async () => {
    const refused = async (response: Response, status: number, reason: RegExp) => {
      assert.equal(response.status, status);
      const json = (await response.json()) as Record<string, unknown>;
      assert.equal(json.code, 'ERR_TOLLGATE_ARGUMENT');
      assert.equal(json.option, null);
      assert.match(String(json.error), /^the request body was refused: /);
      assert.match(String(json.error), reason);
    };
    await refused(await post(base, '{"policies": ['), 400, /not JSON/);
    await refused(await post(base, '{}', 'text/plain'), 400, /application\/json/);
    const large = JSON.stringify({ arrivals: [], padding: 'x'.repeat(1024 * 1024) });
    await refused(await post(base, large), 413, /larger than 1048576 bytes/);
    // Without a declared length the limit holds as the body streams in.
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(100 * 1024).fill(32));
        controller.close();
      },
    });
    const streamed = await fetch(`${base}/api/simulate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    await refused(streamed, 413, /larger than/);
    // The server still answers on.
    assert.equal((await fetch(`${base}/`)).status, 200);
  });

  it('lists the live routes as LIVE_ROUTES defines them', async () => {
    const response = await fetch(`${base}/api/live-routes`);
    assert.equal(response.status, 200);
    assert.deepEqual(
      await response.json(),
      LIVE_ROUTES.map(({ path, label }) => ({ path, label })),
    );
  });

  it('limits each live route with its own policy through the node:http adapter', async () => {
    const statuses = async (path: string, count: number) => {
      const answers: number[] = [];
      for (let i = 0; i < count; i++) answers.push((await fetch(`${base}${path}`)).status);
      return answers;
    };
    // 5 per 10 s: five pass, the sixth is told to wait, with the headers the adapter sets.
    assert.deepEqual(await statuses('/api/fixed-test', 6), [200, 200, 200, 200, 200, 429]);
    const rejected = await fetch(`${base}/api/fixed-test`);
    assert.equal(rejected.status, 429);
    assert.ok(Number(rejected.headers.get('retry-after')) > 0);
    // Each route has its own scope: the fixed window spent nothing of the sliding window's.
    const allowed = await fetch(`${base}/api/sliding-test`);
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get('ratelimit-remaining'), '4');
    assert.deepEqual(await allowed.json(), { ok: true, route: '/api/sliding-test' });
    for (const { path } of LIVE_ROUTES) assert.notEqual((await fetch(`${base}${path}`)).status, 404, path);
  });
});

describe('simulatorHandler without a live store', () => {
  it('serves the page and the route list, not the live routes, and passes the rest to next', async () => {
    const handler = simulatorHandler();
    const passed: string[] = [];
    const { server, base } = await listen((req, res) =>
      handler(req, res, (error?: unknown) => {
        passed.push(`${req.url} ${error === undefined ? 'unanswered' : 'failed'}`);
        res.statusCode = 418;
        res.end();
      }),
    );
    try {
      assert.equal((await fetch(`${base}/`)).status, 200);
      assert.equal((await fetch(`${base}/api/live-routes`)).status, 200);
      assert.equal((await fetch(`${base}/api/fixed-test`)).status, 418);
      assert.deepEqual(passed, ['/api/fixed-test unanswered']);
    } finally {
      await close(server);
    }
  });

  it('checks its options when it is created, naming the option', () => {
    const fails = (options: unknown, option: string) =>
      assert.throws(
        () => simulatorHandler(options as Parameters<typeof simulatorHandler>[0]),
        (error: unknown) => error instanceof TollgateError && error.option === option,
      );
    fails({ liveStore: {} }, 'liveStore');
    fails({ logger: {} }, 'logger');
    fails({ port: 3000 }, 'port');
  });
});
