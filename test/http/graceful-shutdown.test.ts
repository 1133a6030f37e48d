// A real demo process (memory and Redis) signalled mid-request: it stops accepting, finishes the request, exits 0.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  ensureBuilt,
  launchDemo,
  MEMORY_DEMO,
  REDIS_DEMO,
  waitForListening,
  waitForOutput,
} from '../harness/demo-process.js';
import {
  freePorts,
  type RedisServer,
  signalChild,
  startRedisServer,
  waitForExit,
} from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const SLOW_MS = 1_500;

/** Resolves with the error code of a fresh TCP connection, or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

async function drainsInFlight(entry: string, env: Record<string, string>): Promise<void> {
  ensureBuilt(entry);
  const [port] = (await freePorts(1)) as [number];
  const demo = launchDemo(entry, { ...env, PORT: String(port) });
  try {
    await waitForListening(demo, port);
    const url = `http://127.0.0.1:${port}`;
    const slow = fetch(`${url}/api/slow?ms=${SLOW_MS}`, { signal: AbortSignal.timeout(10_000) });
    // The aggregate limiter counts /api/slow on arrival: once it has, the request is in flight.
    for (let seen = 0; seen === 0; ) {
      const totals = (await (await fetch(`${url}/metrics.json`)).json()) as { total: number };
      seen = totals.total;
      if (seen === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    signalChild(demo.child, 'SIGTERM');
    await waitForOutput(demo, 'SIGTERM: draining');
    assert.equal(await tryConnect(port), 'ECONNREFUSED', 'the listener must stop accepting at once');
    const response = await slow;
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { route: string }).route, '/api/slow');
    assert.ok(await waitForExit(demo.child, 15_000), `did not exit:\n${demo.output()}`);
    assert.equal(demo.child.exitCode, 0, demo.output());
    assert.match(demo.output(), /drained; bye/);
  } finally {
    signalChild(demo.child, 'SIGKILL');
  }
}

describe('graceful shutdown of the memory demo', () => {
  it('on SIGTERM stops accepting, completes the in-flight request and exits 0', {
    timeout: 30_000,
  }, async () => {
    await drainsInFlight(MEMORY_DEMO, {});
  });
});

describeWithRedis('graceful shutdown of the Redis demo', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });

  it('on SIGTERM stops accepting, completes the in-flight request, closes Redis and exits 0', {
    timeout: 30_000,
  }, async () => {
    await drainsInFlight(REDIS_DEMO, { REDIS_URL: server.url, REQUIRE_REDIS: '1' });
  });
});
