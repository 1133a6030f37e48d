// Every time bound RedisStore documents, held against a real paused (SIGSTOP) or unreachable Redis: decisions,
// health(), reset(), close(), and the circuit breaker's count of failed calls.
import assert from 'node:assert/strict';
import { after, afterEach, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createLimiter, TollgateError, tokenBucket } from '../../src/index.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { type RedisServer, redisCall, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const COMMAND_TIMEOUT_MS = 150;
/** Far above COMMAND_TIMEOUT_MS: a wait that took it instead would be plain to see. */
const CONNECT_TIMEOUT_MS = 4000;
/** Room for a loaded 2-core CI machine, well below CONNECT_TIMEOUT_MS. */
const MARGIN_MS = 750;
const quiet = { warn: () => {}, error: () => {} };

async function timed<T>(work: Promise<T>): Promise<{ value: T | Error; ms: number }> {
  const started = performance.now();
  // Never more than the connect budget plus a second: a hang fails the assertion below instead of the file.
  const value = await Promise.race([
    work.catch((error: Error) => error),
    sleep(CONNECT_TIMEOUT_MS + 1000).then(() => new Error('still waiting')),
  ]);
  return { value, ms: performance.now() - started };
}

function withinCommandBudget(ms: number, what: string): void {
  assert.ok(ms < COMMAND_TIMEOUT_MS + MARGIN_MS, `${what} took ${Math.round(ms)} ms`);
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Clients connected to `server`, not counting the redis-cli that asks. */
async function clientsOf(server: RedisServer): Promise<number> {
  return (await server.command('CLIENT', 'LIST')).split('\n').filter((line) => !line.includes('cmd=client'))
    .length;
}

describeWithRedis('time bounds against a paused or unreachable Redis', () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const servers: RedisServer[] = [];
  const release = async () => {
    // Resumed first, so nothing below waits on a stopped process, whatever the test left behind.
    for (const paused of servers.splice(0)) paused.resume();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  afterEach(release);
  after(release);

  async function server(): Promise<RedisServer> {
    const started = await startRedisServer();
    servers.push(started);
    cleanups.push(() => started.stop());
    return started;
  }

  function store(options: Partial<RedisStoreOptions>): RedisStore {
    const made = new RedisStore({
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      reconnectCooldownMs: 100,
      logger: quiet,
      ...options,
    });
    cleanups.push(() => made.close());
    return made;
  }

  const limiterOn = (s: RedisStore) =>
    createLimiter({ policy: tokenBucket({ capacity: 100, refillPerSecond: 1 }), store: s });

  it('the breaker counts failed calls, not decisions: one timed-out batch of three is one failure', {
    timeout: 20_000,
  }, async () => {
    const redis = await server();
    const s = store({ url: redis.url, breakerThreshold: 3 });
    const limiter = limiterOn(s);
    await s.connect();
    redis.pause();
    const batch = await Promise.all([1, 2, 3].map((i) => limiter.consume(`c${i}`)));
    assert.ok(batch.every((d) => d.degraded === 'fail-open'));
    assert.equal(s.metrics.timeouts, 1, 'one call');
    assert.equal(s.breakerOpen, false, 'one failed call of three allowed');
    await limiter.consume('c1');
    assert.equal(s.breakerOpen, false);
    await limiter.consume('c1');
    assert.equal(s.breakerOpen, true, 'the third failed call opens it');
  });

  it('slow (another client holds Redis with a long script): each decision answers within commandTimeoutMs', {
    timeout: 20_000,
  }, async () => {
    const redis = await server();
    const s = store({ url: redis.url, failOpen: false });
    const limiter = limiterOn(s);
    assert.equal((await limiter.consume('s')).degraded, undefined);
    // A script that keeps the server busy for a second: every command queues behind it.
    const busy = redis.command(
      'EVAL',
      "local t = redis.call('TIME') local stop = t[1] * 1e6 + t[2] + 1000000 repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] >= stop return 1",
      '0',
    );
    // Busy once a PING goes unanswered: the decision below is then sure to meet the script, however loaded the box.
    await waitFor('the script to hold the server', () =>
      redisCall(redis.host, redis.port, ['PING'], 50).then(
        () => false,
        () => true,
      ),
    );
    const { value, ms } = await timed(limiter.consume('s'));
    assert.equal((value as { degraded?: string }).degraded, 'fail-closed');
    withinCommandBudget(ms, 'a decision while Redis is busy');
    await busy;
    assert.equal((await limiter.consume('s')).degraded, undefined, 'real decisions once it is free again');
  });

  it('health() answers within commandTimeoutMs, paused after connecting, or never connected', {
    timeout: 20_000,
  }, async () => {
    const redis = await server();
    const connected = store({ url: redis.url });
    await connected.connect();
    const never = store({ url: redis.url });
    redis.pause();
    for (const [label, s] of [
      ['connected, then paused', connected],
      ['paused before it ever connected', never],
    ] as const) {
      const { value, ms } = await timed(s.health());
      assert.equal((value as { ok: boolean }).ok, false, label);
      withinCommandBudget(ms, `health(), ${label},`);
      // One budget, one timeout: the wait for a connection and the call share it, and it is counted once.
      await sleep(COMMAND_TIMEOUT_MS);
      assert.equal(s.metrics.timeouts, 1, label);
    }
  });

  it('reset() rejects with ERR_TOLLGATE_TIMEOUT within commandTimeoutMs while Redis is paused', {
    timeout: 20_000,
  }, async () => {
    const redis = await server();
    const s = store({ url: redis.url });
    const limiter = limiterOn(s);
    await limiter.consume('r');
    redis.pause();
    const { value, ms } = await timed(limiter.reset('r'));
    assert.ok(value instanceof TollgateError && value.code === 'ERR_TOLLGATE_TIMEOUT', String(value));
    withinCommandBudget(ms, 'reset()');
  });

  it('close() returns within commandTimeoutMs while Redis is paused (QUIT would wait for ever)', {
    timeout: 20_000,
  }, async () => {
    const redis = await server();
    const s = store({ url: redis.url });
    await limiterOn(s).consume('q');
    redis.pause();
    const { value, ms } = await timed(s.close());
    assert.equal(value, undefined);
    withinCommandBudget(ms, 'close()');
  });

  it('close() during the very first connect leaves no connection open', { timeout: 20_000 }, async () => {
    const redis = await server();
    // Before the client exists (the driver still loading), then with its socket open but not yet ready (paused).
    for (const paused of [false, true]) {
      const s = store({ url: redis.url });
      if (paused) redis.pause();
      const connecting = s.connect().catch((error: Error) => error);
      if (paused) await sleep(50);
      const { ms } = await timed(s.close());
      withinCommandBudget(ms, 'close()');
      assert.ok((await connecting) instanceof Error, 'the connect is abandoned');
      redis.resume();
      await sleep(100);
      assert.equal(await clientsOf(redis), 0, paused ? 'paused' : 'loading');
    }
  });

  it('decisions made before the first connection each answer within commandTimeoutMs, not connectTimeoutMs', {
    timeout: 20_000,
  }, async () => {
    const redis = await server();
    redis.pause();
    const s = store({ url: redis.url, breakerThreshold: 10 });
    const limiter = limiterOn(s);
    for (let i = 0; i < 3; i++) {
      const { value, ms } = await timed(limiter.consume('first'));
      assert.equal((value as { degraded?: string }).degraded, 'fail-open');
      withinCommandBudget(ms, `decision ${i + 1} while Redis is unreachable at start`);
    }
    redis.resume();
    await waitFor('a real decision', async () => (await limiter.consume('first')).degraded === undefined);
    // Answered while it waited: never sent once Redis came back, so only the decisions made since count.
    assert.equal((await limiter.peek('first', { cost: 0 })).remaining, 99);
  });

  it('connect() rejects, every time, while Redis is unreachable', { timeout: 20_000 }, async () => {
    const redis = await server();
    const s = store({ url: redis.url, connectTimeoutMs: 500 });
    await redis.kill();
    for (let attempt = 1; attempt <= 3; attempt++)
      await assert.rejects(s.connect(), Error, `attempt ${attempt} resolved with nothing connected`);
  });

  it('once connected, a decision never waits for a reconnection that health() started', {
    timeout: 20_000,
  }, async () => {
    const redis = await server();
    // An app-owned client, so the test can watch its state and listeners; it retries after 500 ms.
    const app = new Redis(redis.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => 500,
    });
    app.on('error', () => {});
    cleanups.push(() => app.disconnect());
    await app.connect();
    const s = store({ client: app, connectTimeoutMs: CONNECT_TIMEOUT_MS });
    const limiter = limiterOn(s);
    assert.equal((await limiter.consume('d')).degraded, undefined);
    // Its connection dropped, and the server hung before it comes back: the reconnection never gets ready.
    await redis.command('CLIENT', 'KILL', 'TYPE', 'normal');
    redis.pause();
    await waitFor('the client to reconnect to the hung server', () => app.status === 'connect');
    const listeners = app.listenerCount('ready');
    const health = s.health();
    const { value, ms } = await timed(limiter.consume('d'));
    assert.equal((value as { degraded?: string }).degraded, 'fail-open');
    withinCommandBudget(ms, 'a decision during a reconnection');
    await health;
    // Every health() that gives up leaves the one shared wait, not a listener of its own.
    for (let i = 0; i < 5; i++) await s.health();
    assert.ok(app.listenerCount('ready') <= listeners + 1, `${app.listenerCount('ready')} 'ready' listeners`);
  });
});
