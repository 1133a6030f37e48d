// Real demo processes signalled mid-request, with stdout closed or Redis hung: they drain, and always exit in time.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EXIT_MARGIN_MS } from '../../demo/serve.js';
import {
  type Demo,
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
/** The documented bound from the signal to the exit: in-flight requests 10 s, the store's close 2 s, the margin. */
const EXIT_BOUND_MS = 10_000 + 2_000 + EXIT_MARGIN_MS;
/** What a loaded machine may add to it: starting Node, delivering the signal, reporting the exit. */
const SLACK_MS = 3_000;

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

/** Signals the demo and resolves with how it exited, failing if it outlives the documented bound. */
async function terminate(demo: Demo): Promise<{ code: number | null; signal: string | null }> {
  signalChild(demo.child, 'SIGTERM');
  assert.ok(
    await waitForExit(demo.child, EXIT_BOUND_MS + SLACK_MS),
    `still running ${EXIT_BOUND_MS + SLACK_MS} ms after SIGTERM:\n${demo.output()}`,
  );
  return { code: demo.child.exitCode, signal: demo.child.signalCode };
}

describe('shutdown of the memory demo with stdout closed', () => {
  it('exits 0 on SIGTERM: a log line it cannot write holds up nothing', { timeout: 30_000 }, async () => {
    const [port] = (await freePorts(1)) as [number];
    const demo = launchDemo(MEMORY_DEMO, { PORT: String(port) });
    try {
      await waitForListening(demo, port);
      assert.equal((await fetch(`http://127.0.0.1:${port}/api/cheap`)).status, 200);
      // As `npm start | head -2` once head has exited: the next write to stdout fails with EPIPE, and the next
      // one is the drain's own first line.
      demo.child.stdout?.destroy();
      assert.deepEqual(await terminate(demo), { code: 0, signal: null }, demo.output());
    } finally {
      signalChild(demo.child, 'SIGKILL');
    }
  });
});

describe('serve(): a close or a log that misbehaves', () => {
  const FIXTURE = fileURLToPath(new URL('./serve-fixture.ts', import.meta.url));

  /** serve-fixture.ts with its drain at 1 s and its close at 0.5 s: the bound is 2.5 s. */
  function fixture(env: Record<string, string>): Demo {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    return { child, output: () => output };
  }

  const cases = [
    [
      'a close that never settles: exit 1 once its time is up',
      { CLOSE: 'hang' },
      1,
      /close took over 500 ms/,
    ],
    ['a log that throws: exit 0, drained all the same', { LOG: 'throw' }, 0, /^serving\n$/],
  ] as const;
  for (const [name, env, code, output] of cases) {
    it(name, { timeout: 30_000 }, async () => {
      const demo = fixture(env);
      try {
        await waitForOutput(demo, 'serving');
        assert.deepEqual(await terminate(demo), { code, signal: null }, demo.output());
        assert.match(demo.output(), output);
      } finally {
        signalChild(demo.child, 'SIGKILL');
      }
    });
  }

  it('a log call that never returns: the backstop kills the process within the bound', {
    timeout: 30_000,
  }, async () => {
    const demo = fixture({ LOG: 'hang' });
    try {
      await waitForOutput(demo, 'serving');
      const started = Date.now();
      assert.deepEqual(await terminate(demo), { code: null, signal: 'SIGKILL' }, demo.output());
      // 1 s for requests, 0.5 s for the close, then the margin: well before the demos' own bound.
      assert.ok(Date.now() - started >= 1_000 + 500 + EXIT_MARGIN_MS - 100);
    } finally {
      signalChild(demo.child, 'SIGKILL');
    }
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

  it('with its Redis stopped (SIGSTOP), exits on SIGTERM within the bound', { timeout: 30_000 }, async () => {
    const [port] = (await freePorts(1)) as [number];
    const demo = launchDemo(REDIS_DEMO, { REDIS_URL: server.url, REQUIRE_REDIS: '1', PORT: String(port) });
    try {
      await waitForListening(demo, port);
      assert.equal((await fetch(`http://127.0.0.1:${port}/api/cheap`)).status, 200);
      // Connected, then silent: QUIT gets no answer, and the socket stays open.
      server.pause();
      const { code, signal } = await terminate(demo);
      // The store's own close gives up on the hung Redis within its command budget, well inside the drain's.
      assert.deepEqual([code, signal], [0, null], demo.output());
      assert.match(demo.output(), /drained; bye/);
    } finally {
      signalChild(demo.child, 'SIGKILL');
      server.resume();
    }
  });
});
