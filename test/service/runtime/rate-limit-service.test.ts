// createRateLimitService for real: a temp config folder, free ports, gRPC calls through @grpc/grpc-js, hot reloads, drains.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ServiceError } from '@grpc/grpc-js';
import { TollgateError } from '../../../src/core/errors.js';
import { createRateLimitService, type RateLimitService } from '../../../src/service/index.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import type { Store, StoreRequest, StoreResponse } from '../../../src/stores/store.js';
import { call, healthClient, rlsClient as protoClient } from '../grpc/grpc-fixture.js';
import { eventually, type RlsClient, rlsClient } from './rls-client.js';

/**
 * A year: the window is epoch-aligned on the real clock, and a year's ends once in 365 days, where a day's would
 * reset the counts of a run crossing midnight UTC.
 */
const limits = (domain: string, perYear: number) => `domain: ${domain}
descriptors:
  - key: client
    rate_limit:
      unit: year
      requests_per_unit: ${perYear}
`;

const dirs: string[] = [];
function configDir(text: string, name = 'limits.yaml'): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-service-'));
  dirs.push(dir);
  writeFileSync(join(dir, name), text);
  return dir;
}

/** Log lines, by level, instead of the console. */
function capturingLogger() {
  const lines: string[] = [];
  const log =
    (level: string) =>
    (...args: unknown[]) =>
      lines.push(
        `${level}: ${args.map((arg) => (arg instanceof Error ? arg.message : String(arg))).join(' ')}`,
      );
  return { lines, logger: { info: log('info'), warn: log('warn'), error: log('error') } };
}

const opened: { service: RateLimitService; client: RlsClient }[] = [];
async function start(
  dir: string,
  options: { store?: Store; logger?: ReturnType<typeof capturingLogger>['logger'] } = {},
) {
  const service = await createRateLimitService({
    config: dir,
    grpc: { host: '127.0.0.1', port: 0 },
    http: { host: '127.0.0.1', port: 0 },
    logger: capturingLogger().logger,
    ...options,
  });
  const client = rlsClient(service.grpcPort as number);
  opened.push({ service, client });
  return { service, client };
}

/** The limit the service now applies to `client=a` in `domain`. */
const limitNow = (service: RateLimitService, domain: string) =>
  service.config.findLimit(domain, { entries: [{ key: 'client', value: 'a' }] })?.rule.requestsPerUnit;

describe('createRateLimitService', { timeout: 60_000 }, () => {
  after(async () => {
    for (const { service, client } of opened) {
      client.close();
      await service.close(0);
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('answers gRPC calls up to the limit, then OVER_LIMIT, and reports healthy over HTTP', async () => {
    const { service, client } = await start(configDir(limits('count', 3)));
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await client.check('count', 'client=a')).overallCode);
    assert.deepEqual(codes, ['OK', 'OK', 'OK', 'OVER_LIMIT']);
    const first = await client.check('count', 'client=b');
    assert.equal(first.statuses[0]?.limitRemaining, 2);
    assert.deepEqual(first.statuses[0]?.currentLimit, { name: '', requestsPerUnit: 3, unit: 'YEAR' });
    const health = await fetch(`http://127.0.0.1:${service.httpPort}/healthcheck`);
    assert.equal(health.status, 200);
    assert.equal(service.healthy, true);
  });

  it('applies a rewritten file between two calls, keeping the count made under the old one', async () => {
    const dir = configDir(limits('rewrite', 3));
    const { service, client } = await start(dir);
    assert.equal((await client.check('rewrite', 'client=a')).statuses[0]?.limitRemaining, 2);
    assert.equal((await client.check('rewrite', 'client=a')).statuses[0]?.limitRemaining, 1);
    writeFileSync(join(dir, 'limits.yaml'), limits('rewrite', 10));
    await eventually('the new limit applies', () => limitNow(service, 'rewrite') === 10);
    // Two hits counted under the old limit, one now: 10 - 3.
    const after = await client.check('rewrite', 'client=a');
    assert.equal(after.overallCode, 'OK');
    assert.equal(after.statuses[0]?.limitRemaining, 7);
    assert.equal(after.statuses[0]?.currentLimit?.requestsPerUnit, 10);
  });

  it('sees a file replaced by a rename, as editors save', async () => {
    const dir = configDir(limits('rename', 5));
    const { service, client } = await start(dir);
    await client.check('rename', 'client=a');
    // Written elsewhere first, so the folder never holds a half-written or extra file.
    const staging = mkdtempSync(join(tmpdir(), 'tollgate-staging-'));
    dirs.push(staging);
    writeFileSync(join(staging, 'limits.yaml'), limits('rename', 2));
    renameSync(join(staging, 'limits.yaml'), join(dir, 'limits.yaml'));
    await eventually('the renamed file applies', () => limitNow(service, 'rename') === 2);
    const answer = await client.check('rename', 'client=a');
    assert.equal(answer.overallCode, 'OK');
    assert.equal(answer.statuses[0]?.limitRemaining, 0);
    assert.equal((await client.check('rename', 'client=a')).overallCode, 'OVER_LIMIT');
  });

  it("sees a Kubernetes ConfigMap's symlinked folder swapped", async () => {
    // The layout the kubelet writes: limits.yaml -> ..data/limits.yaml, ..data -> a timestamped folder.
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-configmap-'));
    dirs.push(dir);
    mkdirSync(join(dir, '..v1'));
    writeFileSync(join(dir, '..v1', 'limits.yaml'), limits('configmap', 4));
    symlinkSync('..v1', join(dir, '..data'));
    symlinkSync('..data/limits.yaml', join(dir, 'limits.yaml'));
    const { service, client } = await start(dir);
    assert.equal(limitNow(service, 'configmap'), 4);
    await client.check('configmap', 'client=a');
    mkdirSync(join(dir, '..v2'));
    writeFileSync(join(dir, '..v2', 'limits.yaml'), limits('configmap', 6));
    symlinkSync('..v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    rmSync(join(dir, '..v1'), { recursive: true });
    await eventually('the swapped ConfigMap applies', () => limitNow(service, 'configmap') === 6);
    assert.equal((await client.check('configmap', 'client=a')).statuses[0]?.limitRemaining, 4);
  });

  it('keeps the last good configuration when a file goes bad, logs why, counts it, and takes the next good one', async () => {
    const dir = configDir(limits('bad', 3));
    const { lines, logger } = capturingLogger();
    const { service, client } = await start(dir, { logger });
    await client.check('bad', 'client=a');
    writeFileSync(join(dir, 'limits.yaml'), `${limits('bad', 3)}    unknown_key: 1\n`);
    await eventually('the bad file is logged', () => lines.some((line) => line.startsWith('error:')));
    const logged = lines.find((line) => line.startsWith('error:')) as string;
    assert.match(logged, /configuration not reloaded, the last good one still applies/);
    assert.match(logged, /limits\.yaml:7/);
    assert.match(logged, /unknown_key/);
    assert.equal(limitNow(service, 'bad'), 3);
    assert.equal((await client.check('bad', 'client=a')).statuses[0]?.limitRemaining, 1);
    assert.match(service.metricsText(), /tollgate_service_config_loads_total\{result="error"\} 1/);
    await assert.rejects(service.reload(), (error: TollgateError) => error.code === 'ERR_TOLLGATE_CONFIG');
    writeFileSync(join(dir, 'limits.yaml'), limits('bad', 8));
    await eventually('the fixed file applies', () => limitNow(service, 'bad') === 8);
    assert.equal((await client.check('bad', 'client=a')).statuses[0]?.limitRemaining, 5);
    assert.ok(
      lines.some((line) => /^info: configuration reloaded: 1 domain from 1 file/.test(line)),
      lines.join('\n'),
    );
  });

  it('starts on a folder with no domain, unhealthy over HTTP and gRPC and warning why, until one is loaded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-service-'));
    dirs.push(dir);
    const { lines, logger } = capturingLogger();
    const { service } = await start(dir, { logger });
    assert.equal(service.healthy, false);
    assert.ok(
      lines.some((line) => /^warn: .*0 domains/.test(line)),
      lines.join('\n'),
    );
    const health = await fetch(`http://127.0.0.1:${service.httpPort}/healthcheck`);
    assert.equal(health.status, 503);
    assert.match(await health.text(), /no rate limit configuration is loaded \(0 domains\)/);
    const grpcHealth = healthClient(service.grpcPort as number);
    try {
      for (const name of ['', 'ratelimit', 'envoy.service.ratelimit.v3.RateLimitService'])
        assert.deepEqual(await call(grpcHealth, 'Check', { service: name }), { status: 2 }, name);
      writeFileSync(join(dir, 'limits.yaml'), limits('late', 1));
      await eventually('the file applies', () => service.healthy);
      assert.deepEqual(await call(grpcHealth, 'Check', { service: 'ratelimit' }), { status: 1 });
    } finally {
      grpcHealth.close();
    }
    assert.equal((await fetch(`http://127.0.0.1:${service.httpPort}/healthcheck`)).status, 200);
  });

  it('turns unhealthy, with a warning, when a reload leaves no domain', async () => {
    const dir = configDir(limits('emptied', 1));
    const { lines, logger } = capturingLogger();
    const { service } = await start(dir, { logger });
    assert.equal(service.healthy, true);
    rmSync(join(dir, 'limits.yaml'));
    await eventually('the emptied folder applies', () => service.config.domains.length === 0);
    assert.equal(service.healthy, false);
    assert.ok(
      lines.some((line) => /^warn: .*0 domains/.test(line)),
      lines.join('\n'),
    );
    assert.equal((await fetch(`http://127.0.0.1:${service.httpPort}/healthcheck`)).status, 503);
  });

  it("refuses an override whose unit is UNKNOWN or not the protocol's, INVALID_ARGUMENT, counted", async () => {
    const { service } = await start(configDir(limits('override', 1)));
    const client = protoClient(service.grpcPort as number);
    const withLimit = (limit: object) => ({
      domain: 'override',
      descriptors: [
        { entries: [{ key: 'client', value: 'a' }] },
        { entries: [{ key: 'client', value: 'b' }], limit },
      ],
    });
    try {
      // No unit: UNKNOWN, as a route configuration that forgot it sends; one above WEEK the decoder refuses.
      for (const [limit, message] of [
        [{ requestsPerUnit: 5 }, /`limit\.unit` must be one of second, .* \(received 0\)/],
        [{ requestsPerUnit: 5, unit: 8 }, /limit override unit 8/],
      ] as const) {
        await assert.rejects(call(client, 'ShouldRateLimit', withLimit(limit)), (error: ServiceError) => {
          assert.equal(error.code, 3, error.details);
          assert.match(error.details, message);
          return true;
        });
      }
      // A usable override still counts.
      const ok = (await call(client, 'ShouldRateLimit', withLimit({ requestsPerUnit: 5, unit: 6 }))) as {
        overallCode: number;
      };
      assert.equal(ok.overallCode, 1);
    } finally {
      client.close();
    }
    assert.match(service.metricsText(), /requests_total\{protocol="grpc",result="invalid"\} 2/);
  });

  it('refuses to start on a bad file, naming the file, the line and the key', async () => {
    const dir = configDir('domain: start\ndescriptors:\n  - key: client\n    rate_limt:\n      unit: year\n');
    await assert.rejects(
      createRateLimitService({ config: dir, grpc: { port: 0 }, http: { port: 0 } }),
      (error) => {
        assert.ok(error instanceof TollgateError);
        assert.equal(error.code, 'ERR_TOLLGATE_CONFIG');
        assert.match(error.message, /limits\.yaml:4/);
        assert.match(error.message, /rate_limt/);
        return true;
      },
    );
  });

  it('refuses options it cannot use, naming them', async () => {
    const dir = configDir(limits('options', 1));
    for (const [options, option] of [
      [{ config: [] }, 'config'],
      [{ config: dir, grpc: { port: 70_000 } }, 'grpc.port'],
      [{ config: dir, http: { hots: '::' } }, 'hots'],
      [{ config: dir, watch: 'yes' }, 'watch'],
      [{ config: dir, stores: new MemoryStore() }, 'stores'],
    ] as const) {
      await assert.rejects(
        createRateLimitService(options as never),
        (error: TollgateError) => error.code === 'ERR_TOLLGATE_CONFIG' && error.option === option,
        option,
      );
    }
  });

  it('on close, lets a call in flight finish on the configuration it began under, then refuses new ones', async () => {
    const dir = configDir(limits('drain', 2));
    const gate = gatedStore();
    const { service, client } = await start(dir, { store: gate.store });
    const inFlight = client.check('drain', 'client=a');
    await gate.entered;
    const closed = service.close(10_000);
    assert.equal(service.healthy, false);
    gate.release();
    const answer = await inFlight;
    assert.equal(answer.overallCode, 'OK');
    assert.equal(answer.statuses[0]?.limitRemaining, 1);
    await closed;
    await assert.rejects(client.check('drain', 'client=a'));
  });

  it('runs with gRPC or HTTP off', async () => {
    const service = await createRateLimitService({
      config: configDir(limits('off', 1)),
      grpc: false,
      http: { host: '127.0.0.1', port: 0 },
      watch: false,
    });
    try {
      assert.equal(service.grpcPort, undefined);
      assert.equal((await fetch(`http://127.0.0.1:${service.httpPort}/healthcheck`)).status, 200);
    } finally {
      await service.close(0);
    }
  });
});

/** A MemoryStore whose first decision waits until released: a call held in flight, for as long as the test needs. */
function gatedStore() {
  const memory = new MemoryStore();
  let release = () => {};
  let entered = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const reached = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let first = true;
  const store: Store = {
    async evaluate(request: StoreRequest): Promise<StoreResponse> {
      if (first) {
        first = false;
        entered();
        await held;
      }
      return memory.evaluate(request);
    },
    reset: (keys) => memory.reset(keys),
  };
  return { store, entered: reached, release: () => release() };
}
