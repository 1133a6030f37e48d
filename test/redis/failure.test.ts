// Redis breaking for real (killed, paused, restarted, scripts flushed): every decision answers, bounded, in the
// chosen fail mode, counted, and enforcement resumes unaided.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, afterEach, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { createLimiter, type Decision, fixedWindow, type Limiter, tokenBucket } from '../../src/index.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { freePorts, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

/** Short budgets keep the suite fast; the margin absorbs a loaded 2-core CI machine, not a hang. */
const COMMAND_TIMEOUT_MS = 150;
const COOLDOWN_MS = 200;
const MARGIN_MS = 750;
const quiet = { warn: () => {}, error: () => {} };

interface Timed {
  readonly decision: Decision;
  readonly ms: number;
}

async function timedConsume(limiter: Limiter, id: string): Promise<Timed> {
  const started = performance.now();
  const decision = await limiter.consume(id);
  return { decision, ms: performance.now() - started };
}

async function waitFor<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describeWithRedis('when Redis is unavailable', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  after(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(
    options: Partial<RedisStoreOptions> = {},
    client: 'ioredis' | 'node-redis' = 'ioredis',
  ) {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    const base = {
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      connectTimeoutMs: 5000,
      reconnectCooldownMs: COOLDOWN_MS,
      logger: quiet,
      ...options,
    };
    let store: RedisStore;
    if (client === 'node-redis') {
      const nodeClient = createClient({
        url: server.url,
        socket: { reconnectStrategy: () => COOLDOWN_MS, connectTimeout: 500 },
      });
      nodeClient.on('error', () => {});
      cleanups.push(() => nodeClient.destroy() as unknown as Promise<void>);
      await nodeClient.connect();
      store = new RedisStore({ ...base, client: nodeClient });
    } else {
      store = new RedisStore({ ...base, url: server.url });
    }
    cleanups.push(() => store.close());
    await store.connect();
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 1000, refillPerSecond: 1 }), store });
    return { server, store, limiter };
  }

  for (const client of ['ioredis', 'node-redis'] as const) {
    for (const failOpen of [true, false]) {
      it(`${client}, fail ${failOpen ? 'open' : 'closed'}: killed mid-traffic, every request answers in bounded time`, async () => {
        const { server, store, limiter } = await setup({ failOpen }, client);
        const results: Timed[] = [];
        for (let batch = 0; batch < 12; batch++) {
          if (batch === 4) await server.kill('SIGKILL');
          results.push(...(await Promise.all(Array.from({ length: 10 }, () => timedConsume(limiter, 'k')))));
        }
        const degraded = results.filter((r) => r.decision.degraded !== undefined);
        assert.equal(results.length, 120);
        assert.ok(
          results.slice(0, 40).every((r) => r.decision.degraded === undefined),
          'healthy before the kill',
        );
        assert.ok(degraded.length >= 80, 'every request after the kill is degraded');
        for (const { decision } of degraded) {
          assert.equal(decision.allowed, failOpen);
          assert.equal(decision.degraded, failOpen ? 'fail-open' : 'fail-closed');
          assert.equal(decision.retryAfterMs, failOpen ? undefined : 1000);
        }
        const slowest = Math.max(...results.map((r) => r.ms));
        assert.ok(slowest < COMMAND_TIMEOUT_MS + MARGIN_MS, `slowest answer took ${slowest} ms`);
        const counted = failOpen ? store.metrics.degradedAllowed : store.metrics.degradedDenied;
        assert.equal(counted, degraded.length);
        assert.equal(store.metrics.degradedAllowed + store.metrics.degradedDenied, degraded.length);
      });
    }
  }

  it('paused (a hung server): bounded answers, then the breaker answers at once and probes until it is back', async () => {
    const { server, store, limiter } = await setup({ failOpen: false, breakerThreshold: 3 });
    assert.equal((await limiter.consume('p')).degraded, undefined);
    server.pause();
    try {
      const hung = [];
      for (let i = 0; i < 3; i++) hung.push(await timedConsume(limiter, 'p'));
      for (const { decision, ms } of hung) {
        assert.equal(decision.degraded, 'fail-closed');
        assert.ok(ms >= COMMAND_TIMEOUT_MS - 5 && ms < COMMAND_TIMEOUT_MS + MARGIN_MS, `${ms} ms`);
      }
      assert.equal(store.metrics.timeouts, 3);
      assert.equal(store.breakerOpen, true);
      const fast = await Promise.all(Array.from({ length: 50 }, () => timedConsume(limiter, 'p')));
      assert.ok(fast.every((r) => r.decision.degraded === 'fail-closed'));
      assert.equal(store.metrics.timeouts, 3, 'an open breaker sends nothing to Redis, so nothing times out');
    } finally {
      server.resume();
    }
    await waitFor('the breaker to close', async () => (store.breakerOpen ? undefined : true));
    assert.equal((await limiter.consume('p')).degraded, undefined);
    assert.equal(store.metrics.breakerTrips, 1);
  });

  it('restarted (empty data, empty script cache): enforcement resumes unaided within the cooldown', async () => {
    const { server, store, limiter } = await setup({ breakerThreshold: 1_000 });
    await limiter.consume('r');
    await server.restart();
    const started = Date.now();
    const recovered = await waitFor('a real decision', async () => {
      const decision = await limiter.consume('r');
      return decision.degraded === undefined ? decision : undefined;
    });
    assert.ok(Date.now() - started < COOLDOWN_MS + 2000, 'reconnected within the cooldown');
    assert.equal(recovered.remaining, 999, 'the restarted server had no data: a fresh bucket');
    assert.ok(store.metrics.scriptReloads >= 1, 'the empty script cache was refilled transparently');
    for (let i = 0; i < 20; i++) assert.equal((await limiter.consume('r')).degraded, undefined);
  });

  for (const client of ['ioredis', 'node-redis'] as const) {
    it(`${client}: FUNCTION FLUSH and SCRIPT FLUSH cost no failed decision`, async () => {
      const { server, store, limiter } = await setup({}, client);
      for (let round = 0; round < 3; round++) {
        await server.command('FUNCTION', 'FLUSH');
        await server.command('SCRIPT', 'FLUSH');
        const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('f')));
        assert.ok(decisions.every((d) => d.degraded === undefined && d.allowed));
      }
      assert.ok(store.metrics.scriptReloads >= 3);
      assert.equal(store.metrics.errors, 0);
    });
  }

  it('FUNCTION FLUSH every 10 ms while deciding costs no failed decision', async () => {
    const { server, store } = await setup({ commandTimeoutMs: 2000 });
    const flusher = createClient({ url: server.url });
    await flusher.connect();
    cleanups.push(() => flusher.quit());
    let flushing = true;
    const flushes = (async () => {
      let count = 0;
      while (flushing) {
        await flusher.sendCommand(['FUNCTION', 'FLUSH']);
        count++;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return count;
    })();
    // Eight limiters with eight decisions each in flight, for about a second: some flushes land between a load
    // and the call made after it.
    const limiters = Array.from({ length: 8 }, (_, i) =>
      createLimiter({ policy: tokenBucket({ name: `p${i}`, capacity: 1e6, refillPerSecond: 1e3 }), store }),
    );
    const decisions: Decision[] = [];
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 64 }, async (_, i) => {
        while (Date.now() - started < 1000)
          decisions.push(await (limiters[i % 8] as Limiter).consume(`f${i}`));
      }),
    );
    flushing = false;
    assert.ok((await flushes) >= 20, 'the server was flushed again and again');
    assert.deepEqual(
      decisions.filter((d) => d.degraded !== undefined).length,
      0,
      `${decisions.length} decisions, ${store.metrics.scriptReloads} loads`,
    );
  });

  it("fallback: 'memory' enforces a share of the limit per process while Redis is down", async () => {
    const { server, store } = await setup({ fallback: 'memory', fallbackShare: 0.5, breakerThreshold: 1 });
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 10, refillPerSecond: 0 }), store });
    await server.kill('SIGKILL');
    const decisions = [];
    for (let i = 0; i < 8; i++) decisions.push(await limiter.consume('fb'));
    assert.ok(decisions.every((d) => d.degraded === 'fallback'));
    assert.deepEqual(
      decisions.map((d) => d.allowed),
      [true, true, true, true, true, false, false, false],
      'half of a 10-token bucket, enforced locally',
    );
    assert.equal(decisions[0]?.remaining, 4);
    assert.equal(store.metrics.fallbackDecisions, 8);
    assert.equal(store.metrics.degradedAllowed, 5);
    assert.equal(store.metrics.degradedDenied, 3);
  });

  it("fallback: 'memory' keeps a limit of 0 at 0: a share of nothing admits nothing", async () => {
    const { server, store } = await setup({ fallback: 'memory', fallbackShare: 0.5, breakerThreshold: 1 });
    const closed = createLimiter({ policy: fixedWindow({ limit: 0, windowMs: '1m' }), store });
    await server.kill('SIGKILL');
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push(await closed.consume('none'));
    assert.ok(
      decisions.every((d) => d.degraded === 'fallback' && !d.allowed && d.retryAfterMs === undefined),
    );
  });

  it('fallback: the error log names the memory fallback, and a degraded decision keeps the injected clock', async () => {
    const lines: string[] = [];
    const logger = { warn: () => {}, error: (message: unknown) => lines.push(String(message)) };
    const nowMs = 1_900_000_000_000;
    const { server, store } = await setup({ fallback: 'memory', logger, clock: () => nowMs });
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 10, refillPerSecond: 0 }), store });
    await server.kill('SIGKILL');
    const decision = await limiter.consume('log');
    assert.equal(decision.degraded, 'fallback');
    assert.equal(decision.nowMs, nowMs);
    assert.match(lines.join('\n'), /memory fallback/);
    assert.doesNotMatch(lines.join('\n'), /failing open/);
    const failOpen = await setup({ failOpen: true, clock: () => nowMs });
    await failOpen.server.kill('SIGKILL');
    const open = await createLimiter({
      policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }),
      store: failOpen.store,
    }).consume('x');
    assert.deepEqual([open.degraded, open.nowMs], ['fail-open', nowMs]);
  });

  it('a cluster whose slot map is not known yet opens one breaker, not one per slot', async () => {
    const ports = await freePorts(3);
    const store = new RedisStore({
      rootNodes: ports.map((port) => ({ host: '127.0.0.1', port })),
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      connectTimeoutMs: 200,
      reconnectCooldownMs: COOLDOWN_MS,
      breakerThreshold: 3,
      logger: quiet,
    });
    cleanups.push(() => store.close());
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }), store });
    // Twenty clients in twenty slots, three requests each: per slot, each would open a breaker of its own.
    for (let round = 0; round < 3; round++)
      for (let id = 0; id < 20; id++) assert.equal((await limiter.consume(`id-${id}`)).degraded, 'fail-open');
    assert.equal(store.metrics.breakerTrips, 1);
  });

  for (const client of ['ioredis', 'node-redis']) {
    it(`${client}: no unhandled rejection and nothing left open after close()`, async () => {
      const worker = fileURLToPath(new URL('./failure-worker.ts', import.meta.url));
      const child = spawn(process.execPath, ['--import', 'tsx', worker, client], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.on('exit', (exitCode) => {
          clearTimeout(timer);
          resolve(exitCode);
        });
      });
      assert.equal(code, 0, `the worker must exit on its own, cleanly:\n${output}`);
      assert.match(output, /degraded=\d+ and closed, breakerOpen=false/);
    });
  }
});
