// The admin endpoints over real HTTP, on MemoryStore and on RedisStore: auth, throttle, stats, reset, bucket (blocks: blocks.test.ts).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { createServer } from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { describe, it, mock } from 'node:test';
import express from 'express';
import { adminMiddleware, createAdmin } from '../../src/admin/index.js';
import { TollgateError } from '../../src/core/errors.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { listen, silentLogger } from '../../src/testing/adapter-contract.js';
import { describeWithRedis } from '../harness/suite.js';
import {
  type Fixture,
  type MakeStore,
  memoryStores,
  redisStores,
  SECRETS,
  TOKEN,
  withFixture,
} from './admin-fixture.js';

function runAdminSuite(makeStore: () => MakeStore): void {
  const fixture = (run: (f: Fixture) => Promise<void>) => withFixture(makeStore(), run);

  it('answers 401 with no hint to a missing, wrong, short, long or non-Bearer token, all alike', () =>
    fixture(async ({ call }) => {
      const answers = await Promise.all(
        [null, 'x', `${TOKEN.slice(0, -1)}x`, `${TOKEN}${TOKEN}`, ''].map((token) =>
          call('/api/admin/stats', { token }),
        ),
      );
      for (const answer of answers) {
        assert.equal(answer.status, 401);
        assert.equal(answer.text, '{"error":"Unauthorized"}');
        assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
      }
    }));

  it('does not answer other paths, and does not reveal which admin paths exist without the token', () =>
    fixture(async ({ call }) => {
      assert.equal((await call('/api/other')).status, 418);
      assert.equal((await call('/api/administrator')).status, 418);
      assert.equal((await call('/api/admin/nothing-here', { token: null })).status, 401);
      assert.equal((await call('/api/admin/nothing-here')).status, 404);
      assert.equal((await call('/api/admin/stats', { method: 'POST' })).status, 405);
    }));

  it('throttles failed attempts: 429 after 10, even with the right token, until the window passes', () =>
    fixture(async ({ call, clock }) => {
      for (let i = 0; i < 10; i++)
        assert.equal((await call('/api/admin/stats', { token: `guess-${i}` })).status, 401);
      const blocked = await call('/api/admin/stats', { token: 'guess-10' });
      assert.equal(blocked.status, 429);
      assert.equal(blocked.headers.get('retry-after'), '60');
      // A right guess while blocked must look exactly like a wrong one.
      assert.equal((await call('/api/admin/stats')).status, 429);
      clock.now += 60_000;
      assert.equal((await call('/api/admin/stats')).status, 200);
    }));

  it('a success clears the failure count, so an operator who mistypes is not locked out', () =>
    fixture(async ({ call }) => {
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 9; i++)
          assert.equal((await call('/api/admin/stats', { token: 'typo' })).status, 401);
        assert.equal((await call('/api/admin/stats')).status, 200);
      }
    }));

  it('stats: counts and per-scope cardinality; identifiers never in the clear, hashed only on request', () =>
    fixture(async ({ call, api, login }) => {
      for (const id of SECRETS) {
        await api.consume(id);
        await login.consume(id);
      }
      await login.consume('1.2.3.4');
      const plain = await call('/api/admin/stats');
      assert.equal(plain.status, 200);
      assert.equal(plain.headers.get('cache-control'), 'no-store');
      assert.deepEqual(plain.json, {
        keys: 9,
        clients: 3,
        scopes: { api: { keys: 3, clients: 3 }, login: { keys: 6, clients: 3 } },
        unrecognised: 0,
      });
      const hashed = await call('/api/admin/stats?identifiers=hashed');
      for (const answer of [plain, hashed]) {
        for (const secret of [...SECRETS, 'alice', 'braces'])
          assert.ok(!answer.text.includes(secret), secret);
      }
      const scopes = hashed.json.scopes as Record<string, { identifiers: string[] }>;
      assert.equal(scopes.api?.identifiers.length, 3);
      assert.deepEqual(
        [...(scopes.api?.identifiers ?? [])].sort(),
        [...(scopes.login?.identifiers ?? [])].sort(),
      );
      // The bucket endpoint names a client by the same hash, so an operator can find a known client in stats.
      const bucket = await call(`/api/admin/bucket/${encodeURIComponent('bob {braces} key')}?scope=api`);
      assert.ok(scopes.api?.identifiers.includes(bucket.json.identifier as string));
    }));

  it('reset with ?scope= clears that scope only; without it, every scope of that client', () =>
    fixture(async ({ call, api, login }) => {
      for (const id of ['1.2.3.4', 'alice-secret-key']) {
        await api.consume(id);
        await login.consume(id);
      }
      const left = async (id: string) => [
        (await api.peek(id, { cost: 0 })).remaining,
        (await login.peek(id, { cost: 0 })).remaining,
      ];
      const one = await call('/api/admin/reset/1.2.3.4?scope=api', { method: 'POST' });
      assert.equal(one.status, 200);
      assert.deepEqual(one.json.reset, ['api']);
      assert.deepEqual(await left('1.2.3.4'), [5, 2]);
      const all = await call('/api/admin/reset/alice-secret-key', { method: 'POST' });
      assert.deepEqual(all.json.reset, ['api', 'login', 'jobs']);
      assert.deepEqual(await left('alice-secret-key'), [5, 3]);
      assert.ok(!all.text.includes('alice'));
      assert.equal((await call('/api/admin/reset/1.2.3.4?scope=nope', { method: 'POST' })).status, 404);
      assert.equal((await call('/api/admin/reset/1.2.3.4')).status, 405);
    }));

  it('reset groups IPv6 by /64 and reads IPv4-mapped addresses as IPv4, as the adapters do', () =>
    fixture(async ({ call, api }) => {
      await api.consume('1.2.3.4');
      await api.consume('2001:db8:1:2::/64');
      await call(`/api/admin/reset/${encodeURIComponent('::ffff:1.2.3.4')}`, { method: 'POST' });
      await call(`/api/admin/reset/${encodeURIComponent('2001:db8:1:2:aaaa::1')}`, { method: 'POST' });
      assert.equal((await api.peek('1.2.3.4', { cost: 0 })).remaining, 5);
      assert.equal((await api.peek('2001:db8:1:2::/64', { cost: 0 })).remaining, 5);
    }));

  it('bucket reads the balance without spending; a scope is required', () =>
    fixture(async ({ call, api, login }) => {
      await api.consume('1.2.3.4', { cost: 2 });
      await login.consume('1.2.3.4');
      for (let i = 0; i < 2; i++) {
        const answer = await call('/api/admin/bucket/1.2.3.4?scope=api');
        assert.equal(answer.status, 200);
        assert.equal(answer.json.remaining, 3);
        assert.equal(answer.json.limit, 5);
        assert.ok(!answer.text.includes('1.2.3.4'));
      }
      const multi = await call('/api/admin/bucket/1.2.3.4?scope=login');
      assert.deepEqual(
        (multi.json.policies as { name: string; remaining: number }[]).map((p) => [p.name, p.remaining]),
        [
          ['minute', 2],
          ['hour', 9],
        ],
      );
      assert.equal((await call('/api/admin/bucket/1.2.3.4')).status, 400);
      assert.equal((await call('/api/admin/bucket/1.2.3.4?scope=nope')).status, 404);
    }));
}

describe('admin on MemoryStore', () => {
  runAdminSuite(memoryStores);
});

describeWithRedis('admin on RedisStore', () => {
  runAdminSuite(redisStores('admin-test'));
});

describe('admin token', () => {
  it('refuses a token shorter than 16 characters at construction', () => {
    const limiters = [createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }) })];
    for (const token of ['', 'fifteen-chars-x', undefined]) {
      assert.throws(
        () => createAdmin({ token: token as string, limiters }),
        (error) =>
          error instanceof TollgateError && error.code === 'ERR_TOLLGATE_CONFIG' && error.option === 'token',
      );
    }
    assert.doesNotThrow(() => createAdmin({ token: 'sixteen-chars-xx', limiters }));
  });

  it('compares SHA-256 digests with timingSafeEqual: 32 bytes a side whatever was sent, on every attempt', async () => {
    const compare = mock.method(crypto, 'timingSafeEqual');
    syncBuiltinESMExports();
    try {
      await withFixture(
        (clock) => new MemoryStore({ clock, autoCleanup: false }),
        async ({ call }) => {
          const tokens = [null, '', 'x', TOKEN.slice(0, 8), `${TOKEN}x`, 'y'.repeat(500), TOKEN];
          for (const token of tokens) await call('/api/admin/stats', { token });
        },
      );
      assert.equal(compare.mock.callCount(), 7);
      for (const {
        arguments: [a, b],
      } of compare.mock.calls) {
        assert.equal((a as Buffer).length, 32);
        assert.equal((b as Buffer).length, 32);
      }
    } finally {
      compare.mock.restore();
      syncBuiltinESMExports();
    }
  });
});

describe('admin basePath', () => {
  it('must be a normalised path, since requests are matched by their normalised path', async () => {
    const limiters = [createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }) })];
    for (const basePath of ['/', '/ops/', 'ops', '/ops//admin', '/ops/./admin', '/ops/%61dmin', '/ops?x=1']) {
      assert.throws(
        () => createAdmin({ token: TOKEN, limiters, basePath }),
        (error) =>
          error instanceof TollgateError &&
          error.code === 'ERR_TOLLGATE_CONFIG' &&
          error.option === 'basePath',
        basePath,
      );
    }
    const admin = createAdmin({ token: TOKEN, limiters, basePath: '/ops/admin', logger: silentLogger() });
    const server = await listen(
      createServer(async (req, res) => {
        if (!(await admin(req, res))) res.writeHead(418).end();
      }),
    );
    try {
      const status = (path: string) =>
        fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } }).then(
          (r) => r.status,
        );
      for (const path of ['/ops/admin/stats', '/ops//admin/%73tats/'])
        assert.equal(await status(path), 200, path);
      assert.equal(await status('/ops/admin/nothing'), 404);
      assert.equal(await status('/api/admin/stats'), 418);
    } finally {
      await server.close();
    }
  });
});

describe('adminMiddleware on Express', () => {
  it('answers under /api/admin, passes everything else on, and throttles by req.ip', async () => {
    const api = createLimiter({
      scope: 'api',
      policy: tokenBucket({ capacity: 5, refillPerSecond: 0 }),
      store: new MemoryStore({ autoCleanup: false }),
    });
    const app = express();
    app.set('trust proxy', 1);
    app.use(adminMiddleware({ token: TOKEN, limiters: [api], maxFailures: 2 }));
    app.get('/other', (_req, res) => {
      res.json({ other: true });
    });
    const server = await listen(createServer(app));
    try {
      const get = (path: string, headers: Record<string, string>) =>
        fetch(`${server.url}${path}`, { headers }).then((r) => r.status);
      assert.equal(await get('/other', {}), 200);
      assert.equal(await get('/api/admin/stats', { Authorization: `Bearer ${TOKEN}` }), 200);
      const from = (ip: string) => ({ 'X-Forwarded-For': ip, Authorization: 'Bearer wrong' });
      assert.deepEqual(
        [
          await get('/api/admin/stats', from('203.0.113.1')),
          await get('/api/admin/stats', from('203.0.113.1')),
        ],
        [401, 401],
      );
      assert.equal(await get('/api/admin/stats', from('203.0.113.1')), 429);
      // Another client (trusted proxy, so req.ip is the forwarded address) still gets its own attempts.
      assert.equal(await get('/api/admin/stats', from('203.0.113.2')), 401);
    } finally {
      await server.close();
    }
  });
});
