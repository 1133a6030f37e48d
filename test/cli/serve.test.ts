// `tollgate serve` run for real: its usage errors, start failures, gRPC and HTTP answers, and a drain on SIGTERM.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePorts } from '../harness/redis-server.js';
import { startedUpload } from '../harness/started-upload.js';
import { eventually, rlsClient } from '../service/runtime/rls-client.js';
import { cleanUp, limitsFolder, run, serve, stop } from './serve-process.js';

/** A POST /json whose headers the server has taken (it said to continue), its body begun but not finished. */
const startedJsonCall = (port: number, body: string) =>
  startedUpload(`http://127.0.0.1:${port}/json`, body, 5);

describe('tollgate serve', { timeout: 120_000 }, () => {
  after(cleanUp);

  it('is listed in the help, and help serve prints its usage', async () => {
    const main = await run(['--help']);
    assert.match(main.stdout, /^ {2}serve {13}Serve rate limit decisions/m);
    const help = await run(['help', 'serve']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: tollgate serve --config <path>/);
    assert.match(help.stdout, /--host <host> .*default: 127\.0\.0\.1/);
    assert.deepEqual(await run(['serve', '--help']), help);
  });

  it('answers a bad option or variable with exit 2, naming it, and the usage', async () => {
    const dir = limitsFolder('usage', 1);
    for (const [args, env, message] of [
      [['serve'], {}, '--config is required'],
      [['serve', '--config'], {}, '--config needs a value'],
      [
        ['serve', '--config', dir, '--grpc-port', 'x'],
        {},
        '--grpc-port must be a port number from 0 to 65535 (received "x")',
      ],
      [
        ['serve', '--config', dir, '--http-port=65536'],
        {},
        '--http-port must be a port number from 0 to 65535 (received "65536")',
      ],
      [['serve', '--config', dir, '--host='], {}, '--host must not be empty'],
      [
        ['serve', '--config', dir, '--grpc-port', '9000', '--http-port=9000'],
        {},
        '--grpc-port and --http-port must differ (both 9000)',
      ],
      [
        ['serve', '--config', dir, '--http-port', '8081'],
        {},
        '--grpc-port and --http-port must differ (both 8081)',
      ],
      [['serve', '--config', dir, '--port', '1'], {}, 'unknown option --port'],
      [['serve', '--config', dir, 'now'], {}, 'unexpected argument "now"'],
      [
        ['serve', '--config', dir],
        { REDIS_PORT: 'abc' },
        'REDIS_PORT must be a port number from 0 to 65535 (received "abc")',
      ],
      [['serve', '--config', dir], { REDIS_PORT: '0' }, 'REDIS_PORT must be a port number from 1 to 65535'],
      [
        ['serve', '--config', dir],
        { REDIS_CLUSTER_NODES: '[::1]:7000,::1:7001' },
        'REDIS_CLUSTER_NODES must be host:port,host:port,... (received "::1:7001")',
      ],
      [
        ['serve', '--config', dir],
        { REDIS_HOST: 'h', FAIL_OPEN: 'no' },
        'FAIL_OPEN must be 1 or 0 (received "no")',
      ],
      [['serve', '--config', dir], { REDIS_URL: 'not a url' }, 'REDIS_URL is not a URL'],
    ] as const) {
      const result = await run(args, env);
      assert.equal(result.code, 2, args.join(' '));
      assert.equal(result.stdout, '');
      assert.ok(result.stderr.startsWith(`tollgate: ${message}`), result.stderr);
      assert.match(result.stderr, /\n\nUsage: tollgate serve/);
    }
    const json = await run(['serve', '--json', '--grpc-port', '-1']);
    assert.equal(json.code, 2);
    assert.deepEqual(JSON.parse(json.stderr), { error: '--grpc-port needs a value', code: 2 });
  });

  it('refuses to start on a bad file with exit 1 and one line naming the file, line and key', async () => {
    const dir = limitsFolder('bad', 1);
    writeFileSync(
      join(dir, 'limits.yaml'),
      'domain: bad\ndescriptors:\n  - key: client\n    rate_limt: {}\n',
    );
    const result = await run(['serve', '--config', dir, '--grpc-port', '0', '--http-port', '0']);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    const lines = result.stderr.trimEnd().split('\n');
    assert.match(lines.at(-1) as string, /^tollgate: .*limits\.yaml:4.*rate_limt/);
  });

  it('answers a port in use with exit 1 naming the option', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const dir = limitsFolder('taken', 1);
      const grpc = await run(['serve', '--config', dir, '--grpc-port', String(port), '--http-port', '0']);
      assert.equal(grpc.code, 1);
      assert.match(grpc.stderr, new RegExp(`^tollgate: --grpc-port: port ${port} is in use$`, 'm'));
      const http = await run(['serve', '--config', dir, '--grpc-port', '0', '--http-port', String(port)]);
      assert.equal(http.code, 1);
      assert.match(http.stderr, new RegExp(`^tollgate: --http-port: port ${port} is in use$`, 'm'));
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('refuses to start with REQUIRE_REDIS=1 when Redis cannot be reached', async () => {
    const [dead] = await freePorts(1);
    const dir = limitsFolder('require', 1);
    const result = await run(['serve', '--config', dir, '--grpc-port', '0', '--http-port', '0'], {
      REDIS_URL: `redis://127.0.0.1:${dead}`,
      REQUIRE_REDIS: '1',
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /Redis at redis:\/\/127\.0\.0\.1:\d+\/? is unreachable .*REQUIRE_REDIS=1, so not starting/,
    );
  });

  it('counts gRPC calls to the limit, reloads a changed file, and drains an HTTP call in flight on SIGTERM, exiting 0', async () => {
    const dir = limitsFolder('served', 2);
    const { child, grpcPort, httpPort, log } = await serve(['--config', dir]);
    const client = rlsClient(grpcPort);
    try {
      const codes = [];
      for (let i = 0; i < 3; i++) codes.push((await client.check('served', 'client=a')).overallCode);
      assert.deepEqual(codes, ['OK', 'OK', 'OVER_LIMIT']);
      assert.equal((await fetch(`http://127.0.0.1:${httpPort}/healthcheck`)).status, 200);
      assert.equal((await client.check('served', 'client=c')).statuses[0]?.limitRemaining, 1);
      writeFileSync(
        join(dir, 'limits.yaml'),
        'domain: served\ndescriptors:\n  - key: client\n    rate_limit:\n      unit: year\n      requests_per_unit: 5\n',
      );
      await eventually('the reload is logged', () => log().includes('configuration reloaded'));
      // One counted under the old file, one now: 5 - 2.
      assert.equal((await client.check('served', 'client=c')).statuses[0]?.limitRemaining, 3);
    } finally {
      client.close();
    }
    const body = JSON.stringify({
      domain: 'served',
      descriptors: [{ entries: [{ key: 'client', value: 'b' }] }],
    });
    const inFlight = await startedJsonCall(httpPort, body);
    const exit = stop(child, 'SIGTERM');
    await eventually('the drain begins', () => log().includes('SIGTERM: draining'));
    inFlight.finish();
    const answer = await inFlight.answer;
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.body) as { overallCode: string }).overallCode, 'OK');
    assert.equal(await exit, 0);
    assert.match(log(), /drained; bye/);
  });
});
