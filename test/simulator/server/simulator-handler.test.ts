// The library's simulator on plain node:http, no Express: the page from its fixed table, /api/simulate, and the live routes.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import {
  Agent,
  createServer,
  type RequestListener,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TollgateError } from '../../../src/core/errors.js';
import type { Logger } from '../../../src/core/logger.js';
import { simulate } from '../../../src/simulator/engine/index.js';
import { LIVE_ROUTES } from '../../../src/simulator/server/live-routes.js';
import { PAGE_FILES } from '../../../src/simulator/server/page-files.js';
import { MAX_SIMULATED_POLICIES } from '../../../src/simulator/server/simulate-endpoint.js';
import { simulatorHandler } from '../../../src/simulator/server/simulator-handler.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { pointed } from '../../harness/error-pointer.js';

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
  });

  it('answers HEAD to each page file as GET, with its type and length and no body', async () => {
    for (const path of PAGE_FILES.keys()) {
      const get = await fetch(`${base}${path}`);
      const body = await get.arrayBuffer();
      const head = await fetch(`${base}${path}`, { method: 'HEAD' });
      assert.equal(head.status, 200, path);
      assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), path);
      assert.equal(head.headers.get('content-length'), String(body.byteLength), path);
      assert.equal(await head.text(), '', path);
    }
  });

  it('lists every page, script and stylesheet in simulator/, so none fails to load', async () => {
    const onDisk = await readdir(new URL('../../../simulator/', import.meta.url), { recursive: true });
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
      error: pointed(
        `at most ${MAX_SIMULATED_POLICIES} policies can be compared at once`,
        'ERR_TOLLGATE_ARGUMENT',
      ),
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

  it('closes the connection once it refuses a body over 1 MB, rather than read the rest of it', async () => {
    // A body declared too large, then one that grows too large as it streams in: neither is sent to its end.
    for (const headers of [
      { 'content-length': String(10 * 1024 * 1024) },
      { 'transfer-encoding': 'chunked' },
    ]) {
      const { status, connection, closed } = await new Promise<{
        status: number | undefined;
        connection: string | undefined;
        closed: Promise<void>;
      }>((resolve, reject) => {
        const req = request(`${base}/api/simulate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          // A client that asks to keep the connection, as browsers do.
          agent: new Agent({ keepAlive: true }),
        });
        req.on('error', () => {}); // The write of the rest may meet the closed connection.
        req.on('socket', (socket) => {
          const closed = new Promise<void>((ended) => socket.once('close', () => ended()));
          req.on('response', (res) => {
            res.resume();
            resolve({ status: res.statusCode, connection: res.headers.connection, closed });
          });
        });
        req.on('close', () => reject(new Error('closed before an answer')));
        req.write(Buffer.alloc(1024 * 1024 + 1, 32));
      });
      assert.equal(status, 413, JSON.stringify(headers));
      assert.equal(connection, 'close', JSON.stringify(headers));
      await closed;
    }
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

describe('simulatorHandler live routes with a lockout and a concurrency limit', () => {
  let now = 1_700_000_000_000;
  const store = new MemoryStore({ clock: () => now });
  let server: Server;
  let base: string;

  before(async () => {
    ({ server, base } = await listen(simulatorHandler({ liveStore: store })));
  });

  after(async () => {
    await close(server);
    store.close();
  });

  const route = (path: string) => LIVE_ROUTES.find((r) => r.path === path) ?? assert.fail(`no ${path}`);

  it('locks a client out after a 429, even once its bucket has refilled, and lets it through after', async () => {
    assert.equal(route('/api/lockout-test').blockMs, '15s');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await fetch(`${base}/api/lockout-test`)).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    // 3 s on, the bucket holds 3 tokens, and the bucket without a lockout would admit: this one does not.
    now += 3000;
    const blocked = await fetch(`${base}/api/lockout-test`);
    assert.equal(blocked.status, 429);
    assert.equal(blocked.headers.get('retry-after'), '12');
    now += 12_000;
    assert.equal((await fetch(`${base}/api/lockout-test`)).status, 200);
  });

  it('admits at most max requests in flight on the slow concurrency route, and frees a slot by its lease', async () => {
    const { policy, holdMs } = route('/api/concurrency-test');
    assert.equal(policy.kind, 'concurrency');
    assert.ok((holdMs ?? 0) > 0);
    // All three are decided at once, well before the first answers: two hold the slots, the third is refused.
    const answers = await Promise.all([0, 1, 2].map(() => fetch(`${base}/api/concurrency-test`)));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 200, 429]);
    const refused = answers.find((r) => r.status === 429) ?? assert.fail();
    assert.equal(refused.headers.get('ratelimit-remaining'), '0');
    for (const answer of answers) await answer.arrayBuffer();
    // Released or not, a slot is free once its lease has expired on the store's clock.
    now += 10_000;
    assert.equal((await fetch(`${base}/api/concurrency-test`)).status, 200);
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

describe('simulatorHandler faults', () => {
  /** A logger that records what it is given. */
  function recorder(): { logger: Logger; logged: unknown[][] } {
    const logged: unknown[][] = [];
    return {
      logger: { warn: (...args) => logged.push(args), error: (...args) => logged.push(args) },
      logged,
    };
  }

  /** A response whose first setHeader throws: a fault inside the handler, as a page file that cannot be read. */
  function failingOnce(res: ServerResponse): void {
    const setHeader = res.setHeader.bind(res);
    res.setHeader = (() => {
      res.setHeader = setHeader;
      throw new Error('the page went missing');
    }) as typeof res.setHeader;
  }

  it('passes a fault to next when mounted with one, and logs nothing', async () => {
    const { logger, logged } = recorder();
    const handler = simulatorHandler({ logger });
    const passed: unknown[] = [];
    const { server, base } = await listen((req, res) => {
      failingOnce(res);
      handler(req, res, (error?: unknown) => {
        passed.push(error);
        res.statusCode = 503;
        res.end();
      });
    });
    try {
      assert.equal((await fetch(`${base}/`)).status, 503);
      assert.equal(passed.length, 1);
      assert.match(String((passed[0] as Error).message), /the page went missing/);
      assert.deepEqual(logged, []);
    } finally {
      await close(server);
    }
  });

  it('without next, logs a fault and answers 500', async () => {
    const { logger, logged } = recorder();
    const handler = simulatorHandler({ logger });
    const { server, base } = await listen((req, res) => {
      failingOnce(res);
      handler(req, res);
    });
    try {
      const response = await fetch(`${base}/`);
      assert.equal(response.status, 500);
      assert.deepEqual(await response.json(), { error: 'the simulator failed to answer' });
      assert.equal(logged.length, 1);
      const [error] = logged[0] ?? [];
      assert.match(String((error as Error).message), /the page went missing/);
    } finally {
      await close(server);
    }
  });

  it('neither logs nor answers a request whose client went away mid-body', async () => {
    const { logger, logged } = recorder();
    const handler = simulatorHandler({ logger });
    let settled: () => void = () => {};
    const handled = new Promise<void>((resolve) => (settled = resolve));
    const { server, base } = await listen((req, res) => {
      // The handler's failure path runs in the microtasks after the request's close; an immediate runs after them.
      req.once('close', () => setImmediate(settled));
      handler(req, res);
    });
    try {
      const req = request(`${base}/api/simulate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '100', expect: '100-continue' },
        agent: false,
      });
      req.on('error', () => {}); // Destroyed on purpose.
      req.on('response', () => assert.fail('the request was answered'));
      // The server has taken the request once it says to continue; the body then stops short.
      req.once('continue', () => {
        req.write('{"policies":');
        req.destroy();
      });
      req.flushHeaders();
      await handled;
      assert.deepEqual(logged, []);
    } finally {
      await close(server);
    }
  });
});
