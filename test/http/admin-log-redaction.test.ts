// The demo's request log never shows what an admin URL names, however the path is spelled, while the admin serves every spelling of its routes.
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createDemoApp } from '../../demo/demo-app.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { type ContractApp, listen } from '../../src/testing/adapter-contract.js';

const TOKEN = 'demo-admin-token-0123456789';
const T0 = Date.UTC(2030, 0, 1);
const IP = '198.51.100.23';
const KEY = 'demo-key-1';

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** Sends `target` byte for byte: fetch would resolve dot segments before sending. */
function send(app: ContractApp, method: string, target: string, token = TOKEN): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}/`, {
      method,
      path: target,
      headers: { Authorization: `Bearer ${token}` },
      timeout: 5_000,
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${target} timed out`)));
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(text);
        } catch {
          // Express's own 404 page is HTML.
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.end();
  });
}

describe('demo request log: admin paths', () => {
  const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
  const logs: Record<string, unknown>[] = [];
  const lines: string[] = [];
  let app: ContractApp;
  /** What the canonical spelling answers, to compare every other spelling with. */
  const canonical = new Map<string, Reply>();

  before(async () => {
    const logger = pino(
      {},
      {
        write: (line: string) => {
          lines.push(line);
          logs.push(JSON.parse(line));
        },
      },
    );
    app = await listen(createServer(createDemoApp({ store, logger, adminToken: TOKEN, clock: () => T0 })));
    for (const [method, action] of [
      ['POST', 'reset'],
      ['GET', 'bucket'],
    ] as const) {
      for (const who of [IP, KEY]) {
        const reply = await send(app, method, `/api/admin/${action}/${who}?scope=expensive`);
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        canonical.set(`${action} ${who}`, reply);
      }
    }
  });

  after(async () => {
    await app.close();
    store.close();
  });

  /** The path of the log line of the request sent last. */
  const lastLoggedPath = () => logs.filter((line) => line.msg === 'request').at(-1)?.path;

  it('serves every spelling of reset and bucket and logs the route template', async () => {
    const spellings = (who: string, action: string) => [
      `/api/admin/${action}/${who}`,
      `/api/admin/./${action}/${who}`,
      `/api/admin//${action}/${who}`,
      `//api/admin/${action}//${who}`,
      `/api/admin/%2e/${action}/${who}`,
      `/api/admin/%2E%2E/admin/${action}/${who}`,
      `/api/admin/x/../${action}/${who}`,
      `/api/admin/x/.%2e/${action}/${who}`,
      `/api/x/../admin/${action}/${who}`,
      `/api/admin/${action}/./${who}`,
      `/api/admin/${action}/${who}/`,
      `/api/admin\\${action}\\${who}`,
      `/api/admin/%${action.charCodeAt(0).toString(16)}${action.slice(1)}/${who}`,
      `/api/admin/${action}/${who.replaceAll('.', '%2e').replaceAll('-', '%2D')}`,
      `${app.url}/api/admin/${action}/${who}`,
    ];
    for (const [method, action] of [
      ['POST', 'reset'],
      ['GET', 'bucket'],
    ] as const) {
      for (const who of [IP, KEY]) {
        for (const path of spellings(who, action)) {
          const reply = await send(app, method, `${path}?scope=expensive`);
          assert.equal(reply.status, 200, `${method} ${path}: ${JSON.stringify(reply.body)}`);
          assert.deepEqual(reply.body, canonical.get(`${action} ${who}`)?.body, `${method} ${path}`);
          assert.equal(lastLoggedPath(), `/api/admin/${action}/:identifier`, `${method} ${path}`);
        }
      }
    }
  });

  it('serves spellings of stats and logs its path', async () => {
    for (const path of [
      '/api/admin/stats',
      '/api/admin/./stats',
      '/api/admin//stats/',
      '/api/admin/%73tats',
    ]) {
      const reply = await send(app, 'GET', path);
      assert.equal(reply.status, 200, path);
      assert.equal(typeof reply.body.keys, 'number', path);
      assert.equal(lastLoggedPath(), '/api/admin/stats', path);
    }
  });

  it('logs the route template for a wrong token too', async () => {
    const reply = await send(app, 'POST', `/api/admin/./reset/${IP}`, 'a-wrong-token-of-some-length');
    assert.equal(reply.status, 401);
    assert.equal(lastLoggedPath(), '/api/admin/reset/:identifier');
  });

  it('logs a fixed placeholder for anything else under the admin path, whatever answers it', async () => {
    for (const [method, path] of [
      ['POST', `/API/ADMIN/reset/${IP}`],
      ['POST', `/api/Admin/./reset/${IP}`],
      ['POST', `/api/admin/RESET/${IP}`],
      ['POST', `/api/admin/reset/${IP}/more`],
      ['POST', `/api/admin/reset%2f${IP}`],
      ['POST', `/api/admin%2freset%2f${IP}`],
      ['GET', `/api/admin/../x/${IP}`],
      ['GET', `/api/admin/stats/${IP}`],
      ['GET', `/api/admin/${IP}`],
      ['GET', `/api/administrators/${IP}`],
    ] as const) {
      const reply = await send(app, method, path);
      assert.equal(reply.status, 404, `${method} ${path}`);
      assert.equal(lastLoggedPath(), '/api/admin/*', `${method} ${path}`);
    }
  });

  it('never writes the identifier to the log, in any spelling', () => {
    assert.ok(lines.length > 50);
    for (const secret of [IP, IP.replaceAll('.', '%2e'), KEY, KEY.replaceAll('-', '%2D')]) {
      const leaking = lines.filter((line) => line.toLowerCase().includes(secret.toLowerCase()));
      assert.deepEqual(leaking, [], secret);
    }
  });
});
