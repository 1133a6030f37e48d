// End to end: two real `start:redis` demo processes on one throwaway Redis spend from one bucket, and drain cleanly.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { type Demo, launchDemo, REDIS_DEMO, waitForListening } from '../harness/demo-process.js';
import {
  freePorts,
  type RedisServer,
  signalChild,
  startRedisServer,
  waitForExit,
} from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const launch = (env: Record<string, string>): Demo => launchDemo(REDIS_DEMO, env);

describeWithRedis('two start:redis instances on one Redis', () => {
  let server: RedisServer;
  const demos: Demo[] = [];
  const urls: string[] = [];

  before(async () => {
    server = await startRedisServer();
    // A shared TEST_REDIS_URL server may still hold this client's buckets from an earlier run.
    await server.command('DEL', 'tg:expensive|127.0.0.1', 'tg:global|127.0.0.1');
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
    await Promise.all(demos.map((demo, i) => waitForListening(demo, ports[i] as number)));
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

  it('answers 503 on /health while Redis refuses writes, though it still answers PING', async () => {
    const [url] = urls as [string];
    await server.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    await server.command('CONFIG', 'SET', 'maxmemory', '1');
    try {
      assert.equal(await server.command('PING'), 'PONG');
      const response = await fetch(`${url}/health`);
      const body = (await response.json()) as Record<string, unknown>;
      assert.equal(response.status, 503);
      assert.deepEqual([body.status, body.redis], ['degraded', 'unusable']);
      assert.match(String(body.error), /OOM/);
    } finally {
      await server.command('CONFIG', 'SET', 'maxmemory', '0');
    }
    assert.equal((await fetch(`${url}/health`)).status, 200);
  });

  it('refuses to start with REQUIRE_REDIS=1 when Redis is unreachable', async (t) => {
    const [deadRedis, port] = await freePorts(2);
    const demo = launch({
      PORT: String(port),
      REDIS_URL: `redis://127.0.0.1:${deadRedis}`,
      REQUIRE_REDIS: '1',
    });
    // A demo that does not refuse keeps listening, and would keep this file running.
    t.after(async () => {
      signalChild(demo.child, 'SIGKILL');
      await waitForExit(demo.child, 5_000);
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
