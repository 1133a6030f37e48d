// The demo's operations surface over real HTTP: admin only with a token, API keys, tiers, shadow, metrics, logs.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createDemoApp, type DemoOptions } from '../../demo/demo-app.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { type ContractApp, listen } from '../../src/testing/adapter-contract.js';
import { launchDemo, MEMORY_DEMO, waitForListening } from '../harness/demo-process.js';
import { freePorts, signalChild, waitForExit } from '../harness/redis-server.js';

const T0 = Date.UTC(2030, 0, 1);
const TOKEN = 'demo-admin-token-0123456789';

interface Demo {
  readonly app: ContractApp;
  readonly logs: Record<string, unknown>[];
  get(
    path: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; text: string }>;
}

/** The demo on a MemoryStore whose clock stands still (nothing refills mid-test), logging into `logs`. */
async function withDemo(options: Partial<DemoOptions>, run: (demo: Demo) => Promise<void>): Promise<void> {
  const logs: Record<string, unknown>[] = [];
  const logger = pino({}, { write: (line: string) => logs.push(JSON.parse(line)) });
  const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
  const app = await listen(createServer(createDemoApp({ store, logger, clock: () => T0, ...options })));
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${app.url}${path}`, { headers, signal: AbortSignal.timeout(5000) });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  try {
    await run({ app, logs, get });
  } finally {
    await app.close();
    store.close();
  }
}

async function statuses(
  demo: Demo,
  path: string,
  count: number,
  headers: (i: number) => Record<string, string>,
) {
  const result: number[] = [];
  for (let i = 0; i < count; i++) result.push((await demo.get(path, headers(i))).status);
  return result;
}

const times = (n: number, status: number) => Array.from({ length: n }, () => status);

describe('demo: admin routes', () => {
  it('do not exist without ADMIN_TOKEN, whatever is sent', () =>
    withDemo({}, async (demo) => {
      for (const path of ['/api/admin/stats', '/api/admin/bucket/127.0.0.1?scope=global'])
        assert.equal((await demo.get(path, { Authorization: `Bearer ${TOKEN}` })).status, 404);
    }));

  it('answer 401 to a wrong token and 200 to the right one, and log no identifier from the URL', () =>
    withDemo({ adminToken: TOKEN }, async (demo) => {
      await demo.get('/api/expensive');
      assert.equal((await demo.get('/api/admin/stats', { Authorization: 'Bearer wrong' })).status, 401);
      const bucket = await demo.get('/api/admin/bucket/127.0.0.1?scope=expensive', {
        Authorization: `Bearer ${TOKEN}`,
      });
      assert.equal(bucket.status, 200);
      assert.equal(JSON.parse(bucket.text).remaining, 4);
      const logged = demo.logs.filter((line) => line.msg === 'request').map((line) => line.path);
      assert.ok(logged.includes('/api/admin/bucket/:identifier'));
      assert.ok(!JSON.stringify(demo.logs).includes('127.0.0.1'));
    }));

  it('reset a client named by API key', () =>
    withDemo({ adminToken: TOKEN }, async (demo) => {
      const key = { 'x-api-key': 'demo-key-1' };
      assert.deepEqual(await statuses(demo, '/api/expensive', 6, () => key), [...times(5, 200), 429]);
      const reset = await fetch(`${demo.app.url}/api/admin/reset/demo-key-1?scope=expensive`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(reset.status, 200);
      assert.ok(!(await reset.text()).includes('demo-key-1'));
      assert.equal((await demo.get('/api/expensive', key)).status, 200);
    }));
});

describe('demo: identity', () => {
  it('rotating unknown API keys mints no quota: they all spend the IP bucket', () =>
    withDemo({}, async (demo) => {
      const rotating = await statuses(demo, '/api/expensive', 8, (i) => ({ 'x-api-key': `made-up-${i}` }));
      assert.deepEqual(rotating, [...times(5, 200), 429, 429, 429]);
      // A recognised key is its own client.
      assert.equal((await demo.get('/api/expensive', { 'x-api-key': 'demo-key-1' })).status, 200);
    }));

  it('a spoofed X-Forwarded-For is not trusted (trust proxy is off), and each limiter warns once', () =>
    withDemo({}, async (demo) => {
      const spoofed = await statuses(demo, '/api/expensive', 7, (i) => ({
        'X-Forwarded-For': `203.0.113.${i}`,
      }));
      assert.deepEqual(spoofed, [...times(5, 200), 429, 429]);
      const warnings = demo.logs.filter((line) => line.level === 40 && /trust proxy/.test(String(line.msg)));
      // One warning from the aggregate limiter and one from the route's, however many requests.
      assert.equal(warnings.length, 2);
    }));
});

describe('demo: tiers', () => {
  it('/api/tiered: free 10 per minute by IP or free key, paid 100 for demo-key-2, in separate scopes', () =>
    withDemo({}, async (demo) => {
      assert.deepEqual(await statuses(demo, '/api/tiered', 11, () => ({})), [...times(10, 200), 429]);
      const free = await statuses(demo, '/api/tiered', 11, () => ({ 'x-api-key': 'demo-key-1' }));
      assert.deepEqual(free, [...times(10, 200), 429]);
      const paid = await statuses(demo, '/api/tiered', 101, () => ({ 'x-api-key': 'demo-key-2' }));
      assert.deepEqual(paid, [...times(100, 200), 429]);
      const metrics = (await demo.get('/metrics')).text;
      assert.match(metrics, /tollgate_decisions_total\{scope="tier-free",outcome="allowed"\} 20\n/);
      assert.match(metrics, /tollgate_decisions_total\{scope="tier-paid",outcome="allowed"\} 100\n/);
    }));
});

describe('demo: shadow mode, metrics and logs', () => {
  it('shadow never rejects and sends no Retry-After, while metrics and logs count what it would have denied', () =>
    withDemo({}, async (demo) => {
      for (let i = 0; i < 6; i++) {
        const answer = await demo.get('/api/shadow-test');
        assert.equal(answer.status, 200);
        assert.equal(answer.headers.get('retry-after'), null);
      }
      const metrics = (await demo.get('/metrics')).text;
      assert.match(metrics, /tollgate_decisions_total\{scope="shadow",outcome="allowed"\} 3\n/);
      assert.match(metrics, /tollgate_decisions_total\{scope="shadow",outcome="shadow"\} 3\n/);
      const logged = demo.logs
        .filter((line) => line.path === '/api/shadow-test')
        .map(
          (line) =>
            (line.rateLimit as { scope: string; decision: string }[]).find((d) => d.scope === 'shadow')
              ?.decision,
        );
      assert.deepEqual(logged, ['allowed', 'allowed', 'allowed', 'shadow', 'shadow', 'shadow']);
    }));

  it('/metrics has every metric in Prometheus text; /metrics.json the totals at a glance', () =>
    withDemo({}, async (demo) => {
      await statuses(demo, '/api/expensive', 6, () => ({}));
      const metrics = await demo.get('/metrics');
      assert.match(String(metrics.headers.get('content-type')), /^text\/plain/);
      assert.match(metrics.text, /tollgate_decisions_total\{scope="expensive",outcome="denied"\} 1\n/);
      assert.match(metrics.text, /tollgate_decision_duration_seconds_count\{scope="expensive"\} 6\n/);
      // 5 per minute: allowed with 0 left is under 20%.
      assert.match(metrics.text, /tollgate_near_limit_total\{scope="expensive"\} 1\n/);
      assert.match(metrics.text, /tollgate_store_up 1\n/);
      assert.match(metrics.text, /tollgate_store_evictions_total\{state="live"\} 0\n/);
      const totals = JSON.parse((await demo.get('/metrics.json')).text);
      assert.deepEqual([totals.total, totals.allowed, totals.blocked], [12, 11, 1]);
      assert.deepEqual(totals.scopes.expensive, { total: 6, allowed: 5, blocked: 1 });
    }));

  it('logs one structured line per request: decision, scope, remaining, latency, client hashed by default', () =>
    withDemo({}, async (demo) => {
      await demo.get('/api/expensive');
      const line = demo.logs.find((entry) => entry.path === '/api/expensive') as Record<string, unknown>;
      assert.equal(line.status, 200);
      assert.equal(typeof line.latencyMs, 'number');
      assert.match(String(line.client), /^[A-Za-z0-9_-]{16}$/);
      assert.deepEqual(
        (line.rateLimit as Record<string, unknown>[]).map(({ scope, decision, remaining, limit }) => ({
          scope,
          decision,
          remaining,
          limit,
        })),
        [
          { scope: 'global', decision: 'allowed', remaining: 299, limit: 300 },
          { scope: 'expensive', decision: 'allowed', remaining: 4, limit: 5 },
        ],
      );
    }));

  it('logs raw client IPs with LOG_CLIENT_IPS', () =>
    withDemo({ logClientIps: true }, async (demo) => {
      await demo.get('/api/cheap');
      assert.equal(demo.logs.find((entry) => entry.path === '/api/cheap')?.client, '127.0.0.1');
    }));
});

describe('demo: start-up refusals', () => {
  for (const [env, message] of [
    [
      { ADMIN_TOKEN: 'too-short' },
      /ADMIN_TOKEN is not usable: `token` must be a string of at least 16 characters/,
    ],
    [{ API_KEYS: 'a,b', PAID_API_KEYS: 'c' }, /PAID_API_KEYS must be a subset of API_KEYS/],
  ] as const) {
    it(`refuses ${Object.keys(env).join(' + ')} and exits 1 with a clear message`, async (t) => {
      const demo = launchDemo(MEMORY_DEMO, { ...env, PORT: '0' });
      // A demo that does not refuse keeps listening, and would keep this file running.
      t.after(async () => {
        signalChild(demo.child, 'SIGKILL');
        await waitForExit(demo.child, 5_000);
      });
      assert.ok(await waitForExit(demo.child, 10_000), demo.output());
      assert.equal(demo.child.exitCode, 1);
      assert.match(demo.output(), message);
      assert.doesNotMatch(demo.output(), /listening/);
    });
  }

  it('refuses a PORT already in use with what to do, not a stack trace, and exits 1', async (t) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const demo = launchDemo(MEMORY_DEMO, { PORT: String(port) });
    t.after(async () => {
      signalChild(demo.child, 'SIGKILL');
      await waitForExit(demo.child, 5_000);
      await new Promise((resolve) => taken.close(resolve));
    });
    assert.ok(await waitForExit(demo.child, 10_000), demo.output());
    assert.equal(demo.child.exitCode, 1);
    assert.equal(
      demo.output(),
      `tollgate demo: port ${port} is in use: set PORT to a free one (PORT=3001, say)\n`,
    );
  });
});

describe('demo: API_KEYS and PAID_API_KEYS', () => {
  /** The tier limit `/api/tiered` gives each key (100 paid, 10 free) in a demo started with `env`. */
  async function tierLimits(env: Record<string, string>, keys: readonly string[]) {
    const [port] = (await freePorts(1)) as [number];
    const demo = launchDemo(MEMORY_DEMO, { ...env, PORT: String(port) });
    try {
      await waitForListening(demo, port);
      const limits: Record<string, string | null> = {};
      for (const key of keys) {
        const response = await fetch(`http://127.0.0.1:${port}/api/tiered`, {
          headers: { 'x-api-key': key },
          signal: AbortSignal.timeout(5000),
        });
        assert.equal(response.status, 200);
        limits[key] = response.headers.get('RateLimit-Limit');
      }
      return limits;
    } finally {
      signalChild(demo.child, 'SIGKILL');
      await waitForExit(demo.child, 5_000);
    }
  }

  it('a custom API_KEYS alone starts, with no paid key: the default one is not among them', async () => {
    const limits = await tierLimits({ API_KEYS: 'alpha-key,beta-key' }, ['alpha-key', 'beta-key']);
    assert.deepEqual(limits, { 'alpha-key': '10', 'beta-key': '10' });
  });

  it('a custom API_KEYS that holds the default paid key keeps it paid', async () => {
    const limits = await tierLimits({ API_KEYS: 'alpha-key,demo-key-2' }, ['alpha-key', 'demo-key-2']);
    assert.deepEqual(limits, { 'alpha-key': '10', 'demo-key-2': '100' });
  });

  it('PAID_API_KEYS chooses among API_KEYS, and empty means no paid key at all', async () => {
    const chosen = { API_KEYS: 'alpha-key,beta-key', PAID_API_KEYS: 'beta-key' };
    assert.deepEqual(await tierLimits(chosen, ['alpha-key', 'beta-key']), {
      'alpha-key': '10',
      'beta-key': '100',
    });
    assert.deepEqual(await tierLimits({ PAID_API_KEYS: '' }, ['demo-key-1', 'demo-key-2']), {
      'demo-key-1': '10',
      'demo-key-2': '10',
    });
    assert.deepEqual(await tierLimits({}, ['demo-key-1', 'demo-key-2']), {
      'demo-key-1': '10',
      'demo-key-2': '100',
    });
  });
});
