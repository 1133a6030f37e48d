// NODE_DEBUG=tollgate: each step of one request printed, the same as docs/architecture.md shows for each flow a
// user meets on one process and one Redis server (the cluster's flow is checked in test/cluster/).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, it } from 'node:test';
import { printSteps } from '../../src/core/debug-trace.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';
import { FLOWS, runFlow } from '../harness/trace-flows.js';
import { documentedTraces, normalized } from './trace-lines.js';

describeWithRedis('the debug trace of one request', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => server?.stop());
  const documented = documentedTraces();

  for (const flow of FLOWS.filter(({ name }) => !name.includes('Cluster'))) {
    it(`${flow.name}: as docs/architecture.md shows it`, async () => {
      const lines = await runFlow(flow, { redisUrl: server.url }, async (request) => {
        const printed: string[] = [];
        const stop = printSteps((line) => printed.push(line));
        try {
          await request();
        } finally {
          stop();
        }
        return printed;
      });
      const shown = documented.get(flow.name);
      assert.ok(shown !== undefined, `docs/architecture.md shows the trace of "${flow.name}"`);
      assert.deepEqual(lines.map(normalized), shown.map(normalized));
    });
  }
});

it('NODE_DEBUG=tollgate prints the steps to standard error, and nothing is printed without it', () => {
  const script = [
    "import { createLimiter, MemoryStore, tokenBucket } from './src/index.ts';",
    "const limiter = createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }), store: new MemoryStore(), scope: 'cli' });",
    "limiter.consumeSync('someone');",
  ].join('\n');
  const run = (env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url),
      env,
      encoding: 'utf8',
    });
  const { NODE_DEBUG: _, ...quiet } = process.env;
  const traced = run({ ...quiet, NODE_DEBUG: 'tollgate' });
  assert.equal(traced.status, 0, traced.stderr);
  assert.deepEqual(traced.stderr.trim().split('\n').map(normalized), [
    '#N limiter cli: consume 1 under key cli|someone, store MemoryStore',
    '#N decision: allowed, 0 of 1 left',
  ]);
  assert.match(traced.stderr, new RegExp(`^TOLLGATE ${traced.pid}: #1 limiter`));
  const silent = run(quiet);
  assert.equal(silent.status, 0, silent.stderr);
  assert.equal(silent.stderr, '');
});
