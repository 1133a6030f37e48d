// Every subpath loads from the built dist/ through the package's own exports, imported and required alike, and
// optional frameworks stay unloaded.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { import: { default: string } }>;
};

/** Subpath -> its built ES module, for every entry point except package.json. */
const entries = Object.entries(manifest.exports).flatMap(([subpath, target]) =>
  typeof target === 'object' ? [{ subpath, file: resolve(root, target.import.default) }] : [],
);

/**
 * Every value each subpath exports, exactly: the public API is this list, so an export added or dropped by accident
 * fails here, and a new entry point cannot go unchecked. The root is what an application uses; what a custom
 * store's author needs is behind `tollgate/store`, an adapter author's behind `tollgate/gate`, and the contracts
 * both must pass behind `tollgate/testing`.
 */
const EXPECTED: Record<string, readonly string[]> = {
  '.': [
    'DECISION_OUTCOMES',
    'MemoryStore',
    'TollgateError',
    'addressIdentity',
    'apiKeyId',
    'apiKeyIdentity',
    'concurrency',
    'createLimiter',
    'decisionOutcome',
    'fixedWindow',
    'identifierHasher',
    'isNearLimit',
    'rateLimitHeaders',
    'slidingWindow',
    'slidingWindowCounter',
    'tokenBucket',
  ],
  './store': ['bucketKey', 'degradedResponse', 'evaluatePolicies', 'isStore', 'memberOf', 'parseBucketKey'],
  './gate': ['createGate', 'whenOver'],
  './express': ['default', 'rateLimit'],
  './express-rate-limit': [
    'DAY',
    'HOUR',
    'MINUTE',
    'MemoryStore',
    'SECOND',
    'default',
    'ipKeyGenerator',
    'rateLimit',
    'tollgateStore',
  ],
  './fastify': ['RateLimitError', 'rateLimit'],
  './fastify-rate-limit': ['default', 'fastifyRateLimit', 'normalizeIP'],
  './hono': ['rateLimit'],
  './koa': ['rateLimit'],
  './node': ['rateLimit', 'withRateLimit'],
  './nestjs': ['RateLimit', 'RateLimitException', 'RateLimitGuard', 'SkipRateLimit', 'TollgateModule'],
  './nestjs-throttler': [
    'DEFAULT_IPV6_SUBNET_PREFIX',
    'DEFAULT_SWEEP_INTERVAL',
    'InjectThrottlerOptions',
    'InjectThrottlerStorage',
    'SkipThrottle',
    'StoreThrottlerStorage',
    'Throttle',
    'ThrottlerException',
    'ThrottlerGuard',
    'ThrottlerModule',
    'ThrottlerStorage',
    'ThrottlerStorageService',
    'days',
    'getOptionsToken',
    'getStorageToken',
    'hours',
    'minutes',
    'normalizeIp',
    'seconds',
    'throttlerMessage',
    'weeks',
  ],
  './redis': ['RedisStore'],
  './admin': [
    'MAX_LISTED_IDENTIFIERS',
    'MIN_TOKEN_LENGTH',
    'adminMiddleware',
    'bearerTokenCheck',
    'createAdmin',
    'loggedAdminPath',
  ],
  './metrics': ['createMetrics'],
  './otel': ['createOtelMetrics', 'traceTollgate'],
  './simulation': [
    'MAX_GENERATED_ARRIVALS',
    'boundaryBurst',
    'builtInPolicies',
    'bursts',
    'generateArrivals',
    'policyFromSpec',
    'ramp',
    'random',
    'simulate',
    'simulationWork',
    'steady',
  ],
  './adaptive': ['adaptiveConcurrency', 'aimd', 'gradient', 'gradient2', 'vegas'],
  './service': ['Code', 'Unit', 'createRateLimitService', 'loadServiceConfig', 'readServiceConfig'],
  './testing': [
    'CLIENT',
    'STREAMED',
    'listen',
    'runAdapterContract',
    'runStoreContract',
    'shapedByApp',
    'streamedChunks',
  ],
};

/** Node's flag that turns require() of ES modules off, where it has one: the CommonJS build must not need it. */
const NO_REQUIRE_ESM = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module')
  ? ['--no-experimental-require-module']
  : [];

const OPTIONAL_FRAMEWORKS = /^(fastify|fastify-plugin|hono|@hono\/|koa|@nestjs\/[^/]+)(\/|$)/;

/** The bare specifiers a built module reaches, statically or through import(), across its relative imports. */
function reachableBareImports(entry: string): { static: Set<string>; dynamic: Set<string> } {
  const found = { static: new Set<string>(), dynamic: new Set<string>() };
  const seen = new Set<string>();
  const visit = (file: string, kind: 'static' | 'dynamic') => {
    if (seen.has(`${kind}:${file}`)) return;
    seen.add(`${kind}:${file}`);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/\bfrom\s*['"]([^'"]+)['"]|\bimport\s*(\()?\s*['"]([^'"]+)['"]/g)) {
      const specifier = match[1] ?? match[3] ?? '';
      const edge = kind === 'dynamic' || match[2] !== undefined ? 'dynamic' : 'static';
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier), edge);
      else found[edge].add(specifier);
    }
  };
  visit(entry, 'static');
  return found;
}

describe('import smoke test on dist/', () => {
  before(() => {
    // CI builds first; build here only when an entry point has no output yet (a fresh checkout).
    const sources = entries.filter(({ file }) => existsSync(sourceOf(file)));
    if (sources.some(({ file }) => !existsSync(file))) execFileSync('npm', ['run', 'build'], { cwd: root });
  });

  for (const { subpath, file } of entries) {
    const specifier = subpath === '.' ? manifest.name : `${manifest.name}${subpath.slice(1)}`;
    const unbuilt = existsSync(sourceOf(file)) ? false : `src/ has no ${subpath} entry point yet`;
    it(`import('${specifier}') has its exports`, { skip: unbuilt }, async () => {
      const expected = EXPECTED[subpath];
      assert.ok(expected, `add the expected exports of ${subpath} to EXPECTED`);
      const module = (await import(specifier)) as Record<string, unknown>;
      assert.deepEqual(Object.keys(module).sort(), [...expected].sort());
    });
  }

  it("require() of each subpath, with Node's require() of ES modules off, has the exports its import() has", () => {
    const built = entries.filter(({ file }) => existsSync(file)).map(({ subpath }) => subpath);
    // Nest 12 is itself ES modules only: its subpaths need require() of ES modules for Nest, not for tollgate.
    const keys = {
      ...requiredKeys(
        built.filter((subpath) => !subpath.startsWith('./nestjs')),
        NO_REQUIRE_ESM,
      ),
      ...requiredKeys(
        built.filter((subpath) => subpath.startsWith('./nestjs')),
        [],
      ),
    };
    for (const subpath of built)
      assert.deepEqual(keys[subpath]?.sort(), [...(EXPECTED[subpath] ?? [])].sort(), subpath);
  });

  it('an app loading both builds keeps one default store and one shared-scope warning', () => {
    const script = `const warnings = [];
      process.on('warning', (warning) => warnings.push(warning.code));
      const commonJs = require('${manifest.name}');
      import('${manifest.name}').then((esModule) => {
        const first = commonJs.createLimiter({ policy: commonJs.fixedWindow({ limit: 1, windowMs: '1m' }) });
        const second = esModule.createLimiter({ policy: esModule.fixedWindow({ limit: 1, windowMs: '1m' }) });
        const allowed = [first, second].map((limiter) => limiter.consumeSync('client').allowed);
        setImmediate(() => process.stdout.write(JSON.stringify({ allowed, warnings })));
      });`;
    const seen = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' }));
    // The second limiter, of the other build, spends from the same bucket: one quota per client, as with one build.
    assert.deepEqual(seen, { allowed: [true, false], warnings: ['TOLLGATE_SHARED_SCOPE'] });
  });

  it('the Fastify plugin skips encapsulation, as fastify-plugin would', async () => {
    const { rateLimit } = (await import(`${manifest.name}/fastify`)) as Record<
      string,
      Record<symbol, unknown>
    >;
    assert.equal(rateLimit?.[Symbol.for('skip-override')], true);
  });

  for (const subpath of ['.', './express', './express-rate-limit']) {
    it(`${subpath} never loads Fastify, Hono, Koa or NestJS`, () => {
      const file = entries.find((entry) => entry.subpath === subpath)?.file ?? '';
      const { static: statically, dynamic } = reachableBareImports(file);
      const frameworks = [...statically, ...dynamic].filter((specifier) =>
        OPTIONAL_FRAMEWORKS.test(specifier),
      );
      assert.deepEqual(frameworks, []);
    });
  }

  // Observability is opt-in: only tollgate/metrics may load prom-client, only tollgate/otel OpenTelemetry, and
  // nothing in the library loads pino.
  for (const subpath of ['.', './express', './express-rate-limit', './admin']) {
    it(`${subpath} never loads prom-client, OpenTelemetry or pino`, () => {
      const file = entries.find((entry) => entry.subpath === subpath)?.file ?? '';
      const { static: statically, dynamic } = reachableBareImports(file);
      assert.deepEqual(
        [...statically, ...dynamic].filter((specifier) =>
          /^(prom-client|pino|@opentelemetry\/[^/]+)(\/|$)/.test(specifier),
        ),
        [],
      );
    });
  }

  it('./otel imports no OpenTelemetry package when it is loaded (createOtelMetrics may, for the global meter)', () => {
    const file = entries.find((entry) => entry.subpath === './otel')?.file ?? '';
    const { static: statically } = reachableBareImports(file);
    assert.deepEqual(
      [...statically].filter((specifier) => specifier.startsWith('@opentelemetry/')),
      [],
    );
  });

  it('./service loads gRPC and YAML only on demand', () => {
    const file = entries.find((entry) => entry.subpath === './service')?.file ?? '';
    const { static: statically } = reachableBareImports(file);
    assert.deepEqual(
      [...statically].filter((specifier) => specifier.startsWith('@grpc/') || specifier === 'yaml'),
      [],
    );
  });

  it('./hono loads @hono/node-server only on demand', () => {
    const file = entries.find((entry) => entry.subpath === './hono')?.file ?? '';
    const { static: statically, dynamic } = reachableBareImports(file);
    assert.deepEqual(
      [...statically].filter((specifier) => specifier.startsWith('@hono/')),
      [],
    );
    assert.ok(dynamic.has('@hono/node-server/conninfo'));
  });
});

/** What `require()` of each of `subpaths` holds, required in a process of its own run with `flags`. */
function requiredKeys(subpaths: readonly string[], flags: readonly string[]): Record<string, string[]> {
  const specifiers = subpaths.map((subpath) => [subpath, `${manifest.name}${subpath.slice(1)}`]);
  const script = `const keys = {};
    for (const [subpath, specifier] of ${JSON.stringify(specifiers)}) keys[subpath] = Object.keys(require(specifier));
    process.stdout.write(JSON.stringify(keys));`;
  return JSON.parse(
    execFileSync(process.execPath, [...flags, '-e', script], { cwd: root, encoding: 'utf8' }),
  );
}

/** dist/x/y.js -> src/x/y.ts */
function sourceOf(built: string): string {
  return resolve(root, 'src', built.slice(resolve(root, 'dist').length + 1).replace(/\.js$/, '.ts'));
}
