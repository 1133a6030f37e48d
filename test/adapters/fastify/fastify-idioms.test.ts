// Fastify's idioms in tollgate/fastify: request.rateLimit, the hook option, global: false and the rateLimit decorator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { rateLimit } from '../../../src/adapters/fastify/fastify.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import { tokenBucket } from '../../../src/policies/token-bucket.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { unitsLeft } from '../../../src/testing/adapter-contract.js';
import { app, bucket, CAPACITY, isConfigError, nth, readable, statuses, T0 } from './fastify-fixtures.js';

describe('Fastify request.rateLimit', () => {
  it("is on every counted request, admitted or rejected, exact on a fixed clock; a skipped one's is undefined", async (t) => {
    const fastify = app(t);
    const seen: unknown[] = [];
    fastify.addHook('onResponse', async (request) => void seen.push(readable(request.rateLimit)));
    await fastify.register(rateLimit, {
      limiter: bucket(),
      skip: (request) => request.url === '/skipped',
    });
    fastify.get('/', async (request) => ({ remaining: request.rateLimit?.remaining }));
    fastify.get('/skipped', async () => 'skipped');
    fastify.get('/open', { config: { rateLimit: false } }, async () => 'open');
    assert.deepEqual((await fastify.inject('/')).json(), { remaining: 1 });
    assert.deepEqual(await statuses(fastify, '/', 2), [200, 429]);
    assert.deepEqual(await statuses(fastify, '/skipped', 1), [200]);
    assert.deepEqual(await statuses(fastify, '/open', 1), [200]);
    assert.deepEqual(seen, [nth(1), nth(2), nth(3), undefined, undefined]);
  });

  it('is there for a handler, beside the decision it came from', async (t) => {
    const fastify = app(t);
    await fastify.register(rateLimit, {
      limiter: bucket(),
      handler: (request, _reply, decision) => ({
        same: request.rateLimit?.decision === decision,
        figures: readable(request.rateLimit),
      }),
    });
    fastify.get('/', async () => 'ok');
    await statuses(fastify, '/', CAPACITY);
    const rejected = await fastify.inject('/');
    assert.equal(rejected.statusCode, 429);
    assert.deepEqual(rejected.json(), {
      same: true,
      figures: { ...nth(3), resetTime: nth(3).resetTime.toISOString() },
    });
  });
});

describe("Fastify hook: 'preHandler'", () => {
  /** Who the request says it is, as an authentication hook would set it. */
  const authenticate = async (request: FastifyRequest & { user?: string }) => {
    request.user = String(request.headers['x-user']);
  };
  const user = (request: FastifyRequest) => (request as { user?: string }).user;

  it("keys requests by a user that the route's own preHandler sets, and one the app adds later", async (t) => {
    const fastify = app(t);
    fastify.decorateRequest('user', undefined);
    await fastify.register(rateLimit, { limiter: bucket(), hook: 'preHandler', identifier: user });
    fastify.get('/own', { preHandler: authenticate }, async (request) => request.rateLimit?.key);
    fastify.register(async (scope) => {
      // Added after the plugin: app-level preHandler hooks still run before a route's own.
      scope.addHook('preHandler', authenticate);
      scope.get('/scoped', async (request) => request.rateLimit?.key);
    });
    const alice = { 'x-user': 'alice' };
    assert.equal((await fastify.inject({ url: '/own', headers: alice })).body, 'alice');
    assert.deepEqual(await statuses(fastify, '/scoped', 2, alice), [200, 429]);
    assert.deepEqual(await statuses(fastify, '/own', 2, { 'x-user': 'bob' }), [200, 200]);
    assert.deepEqual(await statuses(fastify, '/scoped', 1, { 'x-user': 'bob' }), [429]);
    // A 404 has no route to carry the hook, nor a user here (it counts as unknown); it is limited all the same.
    assert.deepEqual(await statuses(fastify, '/nowhere', 3, { 'x-user': 'carol' }), [404, 404, 429]);
  });

  it('set on one route keys that route by user while the rest of the app counts addresses at onRequest', async (t) => {
    const fastify = app(t);
    const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
    const seen: (string | undefined)[] = [];
    await fastify.register(rateLimit, {
      limiter: bucket(store),
      identifier: (request) => {
        seen.push(user(request));
        return user(request) ?? request.ip;
      },
    });
    fastify.get('/', { onRequest: authenticate }, async () => 'ip');
    const byUser = { hook: 'preHandler', requestsPerMinute: 1, scope: 'user' } as const;
    fastify.get('/user', { preHandler: authenticate, config: { rateLimit: byUser } }, async () => 'user');
    assert.deepEqual(await statuses(fastify, '/user', 2, { 'x-user': 'dave' }), [200, 429]);
    assert.deepEqual(await statuses(fastify, '/', 1, { 'x-user': 'dave' }), [200]);
    // The app-wide limit ran at onRequest, before the route's own onRequest authenticated anyone.
    assert.deepEqual(seen, ['dave', 'dave', undefined]);
    assert.equal(await unitsLeft(bucket(store)), CAPACITY - 1);
  });

  it('limits the routes declared before the plugin loaded (register not awaited), by their own config too', async (t) => {
    const fastify = app(t);
    const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
    void fastify.register(rateLimit, { limiter: bucket(store), hook: 'preHandler' });
    fastify.get('/early', async () => 'early');
    const own = { hook: 'preHandler', requestsPerMinute: 1, scope: 'own' } as const;
    fastify.get('/own', { config: { rateLimit: own } }, async () => 'own');
    fastify.get('/open', { config: { rateLimit: false } }, async () => 'open');
    assert.deepEqual(await statuses(fastify, '/early', 3), [200, 200, 429]);
    assert.deepEqual(await statuses(fastify, '/own', 2), [200, 429]);
    assert.deepEqual(await statuses(fastify, '/open', 3), [200, 200, 200]);
  });

  it('is checked at wire-up, naming the option', async (t) => {
    await assert.rejects(
      async () => app(t).register(rateLimit, { hook: 'onSend' as 'onRequest' }),
      isConfigError('hook'),
    );
    const fastify = app(t);
    await fastify.register(rateLimit, {});
    assert.throws(
      () =>
        fastify.get('/', { config: { rateLimit: { hook: 'preSerialization' as 'onRequest' } } }, () => ''),
      isConfigError('hook'),
    );
  });
});

describe('Fastify global: false', () => {
  it('limits only the routes whose config.rateLimit asks, on the plugin limiter, and leaves 404s alone', async (t) => {
    const fastify = app(t);
    const limiter = bucket();
    await fastify.register(rateLimit, { limiter, global: false });
    fastify.get('/free', async (request) => ({ figures: request.rateLimit ?? 'none' }));
    fastify.get('/limited', { config: { rateLimit: {} } }, async () => 'limited');
    const free = await fastify.inject('/free');
    assert.deepEqual(
      [free.statusCode, free.json(), free.headers.ratelimit],
      [200, { figures: 'none' }, undefined],
    );
    assert.deepEqual(await statuses(fastify, '/free', 3), [200, 200, 200]);
    assert.deepEqual(await statuses(fastify, '/nowhere', 3), [404, 404, 404]);
    assert.deepEqual(await statuses(fastify, '/limited', 3), [200, 200, 429]);
    assert.equal(await unitsLeft(limiter), 0);
  });

  it('must be a boolean, and belongs to the plugin only', async (t) => {
    await assert.rejects(
      async () => app(t).register(rateLimit, { global: 'no' as unknown as boolean }),
      isConfigError('global'),
    );
    const fastify = app(t);
    await fastify.register(rateLimit, {});
    const config = { rateLimit: { global: false } as object };
    assert.throws(() => fastify.get('/', { config }, () => ''), isConfigError('global'));
  });
});

describe('Fastify fastify.rateLimit() decorator', () => {
  it("limits a route as its own preHandler, spending the plugin's buckets once, not also app-wide", async (t) => {
    const fastify = app(t);
    const limiter = bucket();
    await fastify.register(rateLimit, { limiter });
    fastify.get<{ Querystring: { q?: string } }>(
      '/heavy',
      { preHandler: fastify.rateLimit({ cost: 2 }) },
      async (request) => ({ q: request.query.q, remaining: request.rateLimit?.remaining }),
    );
    const heavy = await fastify.inject('/heavy?q=x');
    assert.deepEqual(heavy.json(), { q: 'x', remaining: 0 });
    assert.equal(heavy.headers['ratelimit-remaining'], '0');
    assert.deepEqual(await statuses(fastify, '/heavy', 1), [429]);
    assert.equal(await unitsLeft(limiter), 0);
  });

  it('with limiter options gets buckets of its own on the plugin store; with global: false only it limits', async (t) => {
    const fastify = app(t);
    const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
    await fastify.register(rateLimit, { limiter: bucket(store), global: false });
    const strict = { requestsPerMinute: 1, scope: 'strict' };
    fastify.get('/strict', { onRequest: fastify.rateLimit(strict) }, async () => 'strict');
    fastify.get('/plain', { preHandler: [fastify.rateLimit()] }, async () => 'plain');
    assert.deepEqual(await statuses(fastify, '/strict', 2), [200, 429]);
    assert.equal(
      await unitsLeft(
        createLimiter({ policy: tokenBucket({ requestsPerMinute: 1 }), store, scope: 'strict' }),
      ),
      0,
    );
    assert.equal(await unitsLeft(bucket(store)), CAPACITY);
    assert.deepEqual(await statuses(fastify, '/plain', 3), [200, 200, 429]);
  });

  it('refuses the options that place a limit, naming them', async (t) => {
    const fastify = app(t);
    await fastify.register(rateLimit, {});
    for (const option of ['hook', 'global'])
      assert.throws(() => fastify.rateLimit({ [option]: 'preHandler' }), isConfigError(option));
    assert.throws(() => fastify.rateLimit({ cost: -1 }), isConfigError('cost'));
  });
});
