// The admin's blocks and unblock endpoints over real HTTP, on MemoryStore and on RedisStore.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loggedAdminPath } from '../../src/admin/index.js';
import { identifierHasher } from '../../src/identity/identifier-hash.js';
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

/** The hash the admin names a client by (its `hashKey` defaults to the token). */
const hash = identifierHasher(TOKEN).hash;
const SCOPES = ['api', 'login', 'jobs'];

/** Consumes for `id` on login until a denial starts its lockout (3 per minute, so within 4). */
async function lockOut(login: Fixture['login'], id: string): Promise<void> {
  for (let i = 0; i < 4; i++) if (!(await login.consume(id)).allowed) return;
  assert.fail(`${id} was never denied`);
}

const unblock = (call: Fixture['call'], id: string, query = '?scope=login', token?: string | null) =>
  call(`/api/admin/unblock/${hash(id)}${query}`, {
    method: 'POST',
    ...(token === undefined ? {} : { token }),
  });

function runBlocksSuite(makeStore: () => MakeStore): void {
  const fixture = (run: (f: Fixture) => Promise<void>) => withFixture(makeStore(), run);

  it('blocks lists each current block by scope and keyed hash, and no bucket or concurrency key', () =>
    fixture(async ({ call, api, login, jobs }) => {
      // Bucket keys in every scope (`api|id`, `{login|id}:minute`, ...) and a lease (`{jobs|id}:concurrency`).
      for (const id of SECRETS) {
        await api.consume(id);
        await login.consume(id);
      }
      assert.equal((await jobs.consume('alice-secret-key')).allowed, true);
      await lockOut(login, 'alice-secret-key');
      await jobs.block('bob {braces} key', '1h');
      const listed = await call('/api/admin/blocks');
      assert.equal(listed.status, 200);
      assert.equal(listed.headers.get('cache-control'), 'no-store');
      assert.deepEqual(listed.json, {
        blocks: [
          { scope: 'jobs', identifier: hash('bob {braces} key') },
          { scope: 'login', identifier: hash('alice-secret-key') },
        ],
      });
      for (const secret of [...SECRETS, 'alice', 'braces']) assert.ok(!listed.text.includes(secret), secret);
      // The same hash as bucket and stats name the client by.
      const bucket = await call('/api/admin/bucket/alice-secret-key?scope=login');
      assert.equal(bucket.json.identifier, hash('alice-secret-key'));
      assert.deepEqual((await call('/api/admin/blocks?scope=login')).json, {
        blocks: [{ scope: 'login', identifier: hash('alice-secret-key') }],
      });
      assert.deepEqual((await call('/api/admin/blocks?scope=api')).json, { blocks: [] });
    }));

  it('unblock lifts one block at once: the next request passes, counts and other blocks untouched', () =>
    fixture(async ({ call, clock, login, jobs }) => {
      const id = '1.2.3.4';
      await lockOut(login, id);
      await jobs.block(id, '1h');
      await jobs.block('bob {braces} key', '1h');
      // The minute window is back, so only the block denies (and RedisStore remembers the denial locally).
      clock.now += 60_000;
      assert.equal((await login.consume(id)).blocked, true);
      const answer = await unblock(call, id);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      assert.deepEqual(answer.json, { scope: 'login', identifier: hash(id), unblocked: true });
      const after = await login.consume(id);
      assert.equal(after.allowed, true);
      assert.deepEqual(
        after.policies.map(({ policy, remaining }) => [policy.name, remaining]),
        [
          ['minute', 2],
          ['hour', 6],
        ],
      );
      // Its block in another scope holds; a client stored hashed (`~...`) is lifted by the same hash.
      assert.equal((await jobs.consume(id)).blocked, true);
      assert.equal((await jobs.consume('bob {braces} key')).blocked, true);
      // A client with no block lifts none of the others'.
      assert.equal((await unblock(call, 'nobody-blocked', '?scope=jobs')).json.unblocked, false);
      const bob = await unblock(call, 'bob {braces} key', '?scope=jobs');
      assert.equal(bob.json.unblocked, true);
      assert.equal((await jobs.consume('bob {braces} key')).allowed, true);
      assert.deepEqual((await call('/api/admin/blocks')).json, {
        blocks: [{ scope: 'jobs', identifier: hash(id) }],
      });
      // No block (any more): answered like a reset of a client with nothing stored, saying nothing was lifted.
      const again = await unblock(call, id);
      assert.deepEqual(
        [again.status, again.json],
        [200, { scope: 'login', identifier: hash(id), unblocked: false }],
      );
      assert.deepEqual((await unblock(call, id, '?scope=api')).json.unblocked, false);
    }));

  it('reset lifts a block too, with the rest of the client state in that scope', () =>
    fixture(async ({ call, login }) => {
      await lockOut(login, '1.2.3.4');
      assert.equal((await call('/api/admin/reset/1.2.3.4?scope=login', { method: 'POST' })).status, 200);
      const after = await login.consume('1.2.3.4');
      assert.equal(after.allowed, true);
      assert.equal(after.remaining, 2);
      assert.deepEqual((await call('/api/admin/blocks')).json, { blocks: [] });
    }));

  it('refuses bad input: 400 for a malformed hash or no scope, 404 for an unknown scope or path, 405', () =>
    fixture(async ({ call, login }) => {
      await lockOut(login, '1.2.3.4');
      const h = hash('1.2.3.4');
      for (const bad of ['1.2.3.4', 'x', `${h}x`, h.slice(1), `%2F${h.slice(1)}`, `${h.slice(1)}!`]) {
        const answer = await call(`/api/admin/unblock/${bad}?scope=login`, { method: 'POST' });
        assert.equal(answer.status, 400, bad);
        assert.deepEqual(answer.json, { error: 'the identifier must be a hash as blocks lists it' });
      }
      const noScope = await call(`/api/admin/unblock/${h}`, { method: 'POST' });
      assert.deepEqual([noScope.status, noScope.json], [400, { error: 'give ?scope=', scopes: SCOPES }]);
      for (const path of [
        `/api/admin/unblock/${h}?scope=nope`,
        '/api/admin/blocks?scope=nope',
        '/api/admin/blocks?scope=',
      ]) {
        const answer = await call(path, { method: path.includes('unblock') ? 'POST' : 'GET' });
        assert.deepEqual(
          [answer.status, answer.json],
          [404, { error: 'no limiter has that scope', scopes: SCOPES }],
        );
      }
      for (const path of ['/api/admin/unblock', `/api/admin/unblock/${h}/more`, '/api/admin/blocks/login'])
        assert.equal((await call(path, { method: 'POST' })).status, 404, path);
      const get = await call(`/api/admin/unblock/${h}?scope=login`);
      assert.deepEqual([get.status, get.headers.get('allow')], [405, 'POST']);
      const post = await call('/api/admin/blocks', { method: 'POST' });
      assert.deepEqual([post.status, post.headers.get('allow')], [405, 'GET']);
      // None of it lifted the block.
      assert.equal((await login.consume('1.2.3.4')).blocked, true);
    }));

  it('needs the token like every admin route, counts toward the throttle, and a refused unblock lifts nothing', () =>
    fixture(async ({ call, clock, login }) => {
      await lockOut(login, '1.2.3.4');
      for (const token of [null, 'x', `${TOKEN}x`]) {
        for (const answer of [
          await call('/api/admin/blocks', { token }),
          await unblock(call, '1.2.3.4', '?scope=login', token),
        ]) {
          assert.equal(answer.status, 401);
          assert.equal(answer.text, '{"error":"Unauthorized"}');
          assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
        }
      }
      assert.equal((await call('/api/admin/blocks/extra', { token: null })).status, 401);
      for (let i = 0; i < 3; i++)
        assert.equal((await unblock(call, '1.2.3.4', '?scope=login', 'guess')).status, 401);
      // Ten failures: the right token is refused like a wrong one until the window passes.
      assert.equal((await unblock(call, '1.2.3.4')).status, 429);
      assert.equal((await call('/api/admin/blocks')).status, 429);
      assert.equal((await login.consume('1.2.3.4')).blocked, true);
      clock.now += 60_000;
      assert.equal((await unblock(call, '1.2.3.4')).json.unblocked, true);
    }));
}

describe('admin blocks on MemoryStore', () => {
  runBlocksSuite(memoryStores);

  it('a block that has ended is no longer listed, and unblock finds none', () =>
    withFixture(memoryStores(), async ({ call, clock, jobs }) => {
      await jobs.block('1.2.3.4', '10s');
      assert.equal(((await call('/api/admin/blocks')).json.blocks as unknown[]).length, 1);
      clock.now += 10_000;
      assert.deepEqual((await call('/api/admin/blocks')).json, { blocks: [] });
      assert.equal((await unblock(call, '1.2.3.4', '?scope=jobs')).json.unblocked, false);
    }));
});

describeWithRedis('admin blocks on RedisStore', () => {
  runBlocksSuite(redisStores('admin-blocks-test'));
});

describe('admin blocks: logs', () => {
  it('logs the routes by their templates, never the hash or the scope', () => {
    const h = hash('1.2.3.4');
    assert.equal(loggedAdminPath('/api/admin/blocks?scope=login'), '/api/admin/blocks');
    for (const path of [
      `/api/admin/unblock/${h}?scope=login`,
      `/api/admin/./unblock//${h}/`,
      `/api/admin/%75nblock/${h}`,
    ])
      assert.equal(loggedAdminPath(path), '/api/admin/unblock/:hash', path);
    for (const path of [`/api/admin/unblock/${h}/x`, '/api/admin/blocks/login', `/API/admin/unblock/${h}`])
      assert.equal(loggedAdminPath(path), '/api/admin/*', path);
  });
});
