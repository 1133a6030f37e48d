// Every subpath loads from the built dist/ through the package's own exports, and optional frameworks stay unloaded.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { default: string }>;
};

/** Subpath -> its built file, for every entry point except package.json. */
const entries = Object.entries(manifest.exports).flatMap(([subpath, target]) =>
  typeof target === 'object' ? [{ subpath, file: resolve(root, target.default) }] : [],
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
  './express': ['default', 'ipKeyGenerator', 'rateLimit'],
  './fastify': ['RateLimitError', 'rateLimit'],
  './hono': ['rateLimit'],
  './koa': ['rateLimit'],
  './node': ['rateLimit', 'withRateLimit'],
  './nestjs': ['RateLimit', 'RateLimitException', 'RateLimitGuard', 'SkipRateLimit', 'TollgateModule'],
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

  it('the Fastify plugin skips encapsulation, as fastify-plugin would', async () => {
    const { rateLimit } = (await import(`${manifest.name}/fastify`)) as Record<
      string,
      Record<symbol, unknown>
    >;
    assert.equal(rateLimit?.[Symbol.for('skip-override')], true);
  });

  for (const subpath of ['.', './express']) {
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
  for (const subpath of ['.', './express', './admin']) {
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

/** dist/x/y.js -> src/x/y.ts */
function sourceOf(built: string): string {
  return resolve(root, 'src', built.slice(resolve(root, 'dist').length + 1).replace(/\.js$/, '.ts'));
}
