// End to end: two real `start:redis` demo processes on one throwaway Redis spend from one bucket, and drain cleanly.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  freePorts,
  type RedisServer,
  signalChild,
  startRedisServer,
  waitForExit,
} from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = 'dist/server/main-redis.js';
const STARTUP_TIMEOUT_MS = 10_000;
// setpriv ties each demo to this test process, so even a SIGKILLed test run leaves no server behind.
const SETPRIV = spawnSync('setpriv', ['--version']).status === 0;

interface Demo {
  readonly child: ChildProcess;
  readonly output: () => string;
}

/** Runs the demo as `npm run start:redis` would (without its build step) and collects what it prints. */
function launch(env: Record<string, string>): Demo {
  const argv = [process.execPath, ENTRY];
  const [command, ...args] = SETPRIV ? ['setpriv', '--pdeathsig', 'KILL', '--', ...argv] : argv;
  const child = spawn(command as string, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return { child, output: () => output };
}

async function listening(demo: Demo, port: number): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (!demo.output().includes(`listening on http://127.0.0.1:${port}`)) {
    if (demo.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the demo on port ${port} did not start:\n${demo.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeWithRedis('two start:redis instances on one Redis', () => {
  let server: RedisServer;
  const demos: Demo[] = [];
  const urls: string[] = [];

  before(async () => {
    if (!existsSync(`${ROOT}${ENTRY}`)) {
      const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(build.status, 0, `npm run build failed:\n${build.stdout}${build.stderr}`);
    }
    server = await startRedisServer();
    // A shared TEST_REDIS_URL server may still hold this client's buckets from an earlier run.
    await server.command('DEL', 'ratelimit:expensive|127.0.0.1', 'ratelimit:global|127.0.0.1');
    const ports = await freePorts(2);
    for (const [i, port] of ports.entries()) {
      const env = {
        PORT: String(port),
        SERVER_ID: `server${i + 1}`,
        REDIS_URL: server.url,
        REQUIRE_REDIS: '1',
      };
      demos.push(launch(env));
      urls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(demos.map((demo, i) => listening(demo, ports[i] as number)));
  });

  after(async () => {
    // Only after a failed test can a demo still be running here.
    for (const { child } of demos) signalChild(child, 'SIGKILL');
    await server?.stop();
  });

  it('spends from one bucket: 5 admitted across both, then 429 from both', async () => {
    const answers: { status: number; server: unknown; instance: number }[] = [];
    for (let i = 0; i < 12; i++) {
      const instance = i % 2;
      const response = await fetch(`${urls[instance]}/api/expensive`);
      const body = (await response.json()) as { server?: unknown };
      answers.push({ status: response.status, server: body.server, instance });
    }
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429],
    );
    for (const answer of answers.filter((a) => a.status === 200))
      assert.equal(answer.server, `server${answer.instance + 1}`);
  });

  it('reports Redis on /health', async () => {
    for (const [i, url] of urls.entries()) {
      const response = await fetch(`${url}/health`);
      const body = (await response.json()) as Record<string, unknown>;
      assert.equal(response.status, 200);
      assert.equal(body.redis, 'ok');
      assert.equal(body.server, `server${i + 1}`);
      assert.equal(body.failOpen, true);
      assert.equal(typeof body.latencyMs, 'number');
    }
  });

  it('refuses to start with REQUIRE_REDIS=1 when Redis is unreachable', async () => {
    const [deadRedis, port] = await freePorts(2);
    const demo = launch({
      PORT: String(port),
      REDIS_URL: `redis://127.0.0.1:${deadRedis}`,
      REQUIRE_REDIS: '1',
    });
    assert.ok(await waitForExit(demo.child, 5_000), `still running:\n${demo.output()}`);
    assert.equal(demo.child.exitCode, 1, demo.output());
    assert.match(demo.output(), /unreachable .*REQUIRE_REDIS=1, so not starting/);
    assert.doesNotMatch(demo.output(), /listening/);
  });

  it('drains on SIGTERM and exits 0', async () => {
    for (const { child, output } of demos) {
      child.kill('SIGTERM');
      assert.ok(await waitForExit(child, 15_000), `did not exit:\n${output()}`);
      assert.equal(child.exitCode, 0, output());
      assert.match(output(), /drained; bye/);
    }
  });
});
