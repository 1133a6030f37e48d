// The gate's per-request hooks: the default identity through addressIdentity, requests without one, onDecision, tiers.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, mock } from 'node:test';
import express from 'express';
import { rateLimit } from '../../src/adapters/express/express.js';
import { TollgateError } from '../../src/core/errors.js';
import { createGate } from '../../src/gate/gate.js';
import type { DecisionEvent } from '../../src/gate/options.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { listen, silentLogger, unitsLeft } from '../../src/testing/adapter-contract.js';

const T0 = Date.UTC(2030, 0, 1);

function limiterOf(scope: string, capacity: number) {
  const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
  return createLimiter({ scope, policy: tokenBucket({ capacity, refillPerSecond: 0 }), store });
}

/** A gate whose "framework" request is the client address itself. */
function gateFor(options: Parameters<typeof createGate<string>>[0]) {
  return createGate<string>({ logger: silentLogger(), ...options }, { name: 'test', identifier: (ip) => ip });
}

describe('default identity', () => {
  it('groups IPv6 clients of one /64 into one bucket and IPv4-mapped addresses with IPv4', async () => {
    const limiter = limiterOf('ip', 2);
    const gate = gateFor({ limiter });
    const actions = [];
    for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:a:b:c:d'])
      actions.push((await gate.check(ip)).action);
    assert.deepEqual(actions, ['next', 'next', 'reject']);
    assert.equal(await unitsLeft(limiter, '2001:db8:1:3::/64'), 2);
    await gate.check('::ffff:10.0.0.1');
    assert.equal(await unitsLeft(limiter, '10.0.0.1'), 1);
  });

  it('Express behind a trusted proxy: forwarded IPv6 addresses of one /64 share a bucket', async () => {
    const limiter = limiterOf('express', 2);
    const app = express();
    app.set('trust proxy', 1);
    app.use(rateLimit({ limiter, logger: silentLogger() }));
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
    const server = await listen(createServer(app));
    try {
      const statuses = [];
      for (const ip of ['2001:db8::1', '2001:db8::2', '2001:db8::3', '2001:db8:0:1::1']) {
        statuses.push((await fetch(`${server.url}/`, { headers: { 'X-Forwarded-For': ip } })).status);
      }
      assert.deepEqual(statuses, [200, 200, 429, 200]);
    } finally {
      await server.close();
    }
  });

  it('a dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d; they spend the IPv4 bucket', async (t) => {
    const limiter = limiterOf('dual', 3);
    const server = createServer(
      express()
        .use(rateLimit({ limiter, logger: silentLogger() }))
        .get('/', (_req, res) => {
          res.json({ ok: true });
        }),
    );
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(0, '::', () => resolve(true));
    });
    if (!listening) return t.skip('no IPv6 on this machine');
    try {
      const { port } = server.address() as { port: number };
      assert.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 200);
      assert.equal(await unitsLeft(limiter, '127.0.0.1'), 2);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('requests without an identity', () => {
  const identities = ['', undefined, null, false] as const;
  /** A gate whose "framework" request is the identity the identifier returns, falsy ones included. */
  const gateOf = (options: Parameters<typeof createGate<string | null | false | undefined>>[0]) =>
    createGate<string | null | false | undefined>(
      { logger: silentLogger(), ...options },
      { name: 'test', identifier: (identity) => identity },
    );

  it("share the bucket 'unknown', and onDecision reports those decisions", async () => {
    const limiter = limiterOf('anon', 2);
    const events: DecisionEvent[] = [];
    const gate = gateOf({ limiter, onDecision: (event) => events.push(event) });
    const actions = [];
    for (const identity of identities) actions.push((await gate.check(identity)).action);
    assert.deepEqual(actions, ['next', 'next', 'reject', 'reject']);
    assert.equal(await unitsLeft(limiter, 'unknown'), 0);
    assert.deepEqual(
      events.map((e) => [e.scope, e.decision.allowed]),
      [
        ['anon', true],
        ['anon', true],
        ['anon', false],
        ['anon', false],
      ],
    );
  });

  it("with unidentified: 'reject' are answered 400 by the gate: not counted, not reported, not logged", async () => {
    const limiter = limiterOf('anon', 2);
    const logger = silentLogger();
    const onDecision = mock.fn();
    const gate = gateOf({ limiter, logger, onDecision, unidentified: 'reject' });
    for (const identity of identities) {
      const outcome = await gate.check(identity);
      assert.ok(outcome.action === 'fail');
      assert.equal(outcome.status, 400);
      assert.ok(outcome.error instanceof TollgateError && outcome.error.code === 'ERR_TOLLGATE_ARGUMENT');
    }
    assert.equal((await gate.check('1.1.1.1')).action, 'next');
    assert.equal(await unitsLeft(limiter, 'unknown'), 2);
    assert.equal(onDecision.mock.callCount(), 1);
    assert.equal(logger.error.mock.callCount(), 0);
  });

  it('skip still lets them through uncounted, whichever mode', async () => {
    for (const unidentified of ['shared', 'reject'] as const) {
      const limiter = limiterOf('anon', 1);
      const gate = gateOf({ limiter, unidentified, skip: () => true });
      for (const identity of identities) assert.equal((await gate.check(identity)).action, 'next');
      assert.equal(await unitsLeft(limiter, 'unknown'), 1);
    }
  });

  it('rejects an unknown mode at wire-up', () => {
    for (const unidentified of ['allow', true, 'Shared'])
      assert.throws(
        () => gateOf({ limiter: limiterOf('anon', 1), unidentified: unidentified as never }),
        (error) =>
          error instanceof TollgateError &&
          error.code === 'ERR_TOLLGATE_CONFIG' &&
          error.option === 'unidentified' &&
          /`unidentified` must be one of "shared", "reject"/.test(error.message),
      );
  });
});

describe('onDecision', () => {
  it('reports scope, decision, latency and shadow for each decision, and nothing for skipped requests', async () => {
    const events: DecisionEvent[] = [];
    const gate = gateFor({
      limiter: limiterOf('watched', 1),
      shadow: true,
      skip: (ip) => ip === 'skipped',
      onDecision: (event, req) => {
        assert.equal(typeof req, 'string');
        events.push(event);
      },
    });
    assert.equal((await gate.check('1.1.1.1')).action, 'next');
    assert.equal((await gate.check('1.1.1.1')).action, 'next');
    await gate.check('skipped');
    assert.deepEqual(
      events.map((e) => [e.scope, e.decision.allowed, e.shadow]),
      [
        ['watched', true, true],
        ['watched', false, true],
      ],
    );
    for (const event of events) assert.ok(event.latencyMs >= 0 && event.latencyMs < 1000);
  });

  it('a throwing observer is logged, and the request still gets its answer', async () => {
    const logger = silentLogger();
    const gate = createGate<string>(
      {
        limiter: limiterOf('x', 1),
        logger,
        onDecision: () => {
          throw new Error('observer bug');
        },
      },
      { name: 'test', identifier: (ip) => ip },
    );
    assert.equal((await gate.check('1.1.1.1')).action, 'next');
    assert.equal((await gate.check('1.1.1.1')).action, 'reject');
    assert.equal(logger.error.mock.callCount(), 2);
  });
});

describe('tiers', () => {
  const free = () => limiterOf('free', 2);
  const paid = () => limiterOf('paid', 4);

  it('chooses the limiter per request, each tier in its own buckets', async () => {
    const base = free();
    const paidTier = paid();
    const events: string[] = [];
    const gate = gateFor({
      limiter: base,
      tiers: { resolve: (ip) => (ip.startsWith('10.') ? 'paid' : undefined), limiters: { paid: paidTier } },
      onDecision: (event) => events.push(event.scope),
    });
    const run = async (ip: string, times: number) => {
      const actions = [];
      for (let i = 0; i < times; i++) actions.push((await gate.check(ip)).action);
      return actions;
    };
    assert.deepEqual(await run('1.1.1.1', 3), ['next', 'next', 'reject']);
    assert.deepEqual(await run('10.0.0.1', 5), ['next', 'next', 'next', 'next', 'reject']);
    assert.equal(await unitsLeft(paidTier, '1.1.1.1'), 4);
    assert.equal(await unitsLeft(base, '10.0.0.1'), 2);
    assert.deepEqual([...new Set(events)], ['free', 'paid']);
  });

  it('an unknown tier name is a 500 with a logged argument error, never a pass', async () => {
    const logger = silentLogger();
    const gate = createGate<string>(
      { limiter: free(), logger, tiers: { resolve: () => 'gold', limiters: { paid: paid() } } },
      { name: 'test', identifier: (ip) => ip },
    );
    const outcome = await gate.check('1.1.1.1');
    assert.equal(outcome.action, 'fail');
    const [error] = logger.error.mock.calls[0]?.arguments ?? [];
    assert.ok(error instanceof TollgateError && error.code === 'ERR_TOLLGATE_ARGUMENT');
    assert.match(error.message, /"gold"/);
  });

  it('rejects tiers sharing a scope, or with no limiters, at wire-up', () => {
    const same = limiterOf('free', 9);
    assert.throws(
      () => gateFor({ limiter: free(), tiers: { resolve: () => undefined, limiters: { paid: same } } }),
      /scope of its own/,
    );
    assert.throws(
      () => gateFor({ limiter: free(), tiers: { resolve: () => undefined, limiters: {} } }),
      /at least one tier/,
    );
  });
});
