// The layer rules (.dependency-cruiser.cjs) each refuse an import planted against them in a copy of src/, and pass
// the real tree: a rule that no longer matches what it was written for would otherwise pass in silence.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, it } from 'node:test';

const require = createRequire(import.meta.url);
const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const config = require(CONFIG) as { forbidden: { name: string }[] };

/** For each rule, an import it exists to refuse: a file of src/, and what is appended to it. */
const PLANTS: Record<string, readonly [file: string, line: string]> = {
  // validate.ts imports errors.ts.
  'no-cycles': ['src/core/errors.ts', "import './validate.js';"],
  'every-module-in-a-layer': ['src/planted.ts', "import './core/errors.js';"],
  'core-imports-only-below': ['src/core/errors.ts', "import '../limiter/lease.js';"],
  'policies-imports-only-below': ['src/policies/lockout.ts', "import '../stores/key.js';"],
  'stores-imports-only-below': ['src/stores/key.ts', "import '../decision/outcome.js';"],
  'identity-imports-only-below': ['src/identity/identity.ts', "import '../decision/outcome.js';"],
  'adaptive-imports-only-below': ['src/adaptive/partitions.ts', "import '../limiter/lease.js';"],
  'decision-imports-only-below': ['src/decision/outcome.ts', "import '../identity/identity.js';"],
  'limiter-imports-only-below': ['src/limiter/lease.ts', "import '../gate/throw.js';"],
  'gate-imports-only-below': ['src/gate/throw.ts', "import '../admin/bearer-token.js';"],
  'adapters-imports-only-below': ['src/adapters/koa/koa.ts', "import '../../admin/bearer-token.js';"],
  'admin-imports-only-below': ['src/admin/bearer-token.ts', "import '../gate/throw.js';"],
  'telemetry-imports-only-below': ['src/telemetry/observability.ts', "import '../limiter/lease.js';"],
  'testing-imports-only-below': ['src/testing/test-clock.ts', "import '../admin/bearer-token.js';"],
  'simulator-engine-imports-only-below': [
    'src/simulator/engine/pattern-times.ts',
    "import '../../limiter/lease.js';",
  ],
  'simulator-server-imports-only-below': [
    'src/simulator/server/http-json.ts',
    "import '../../admin/bearer-token.js';",
  ],
  'service-imports-only-below': ['src/service/engine/observer.ts', "import '../../gate/throw.js';"],
  'the-main-entry-imports-no-edge-tool': ['src/index.ts', "import './admin/bearer-token.js';"],
  'nothing-imports-the-main-entry': ['src/admin/stats.ts', "import '../index.js';"],
  'adapters-import-no-other-adapter': ['src/adapters/hono/hono.ts', "import '../koa/koa.js';"],
  'telemetry-exporters-stand-alone': ['src/telemetry/otel/index.ts', "import '../prometheus/index.js';"],
  'only-the-command-imports-the-cli': ['src/simulator/server/page-files.ts', "import '../../cli/usage.js';"],
  'nothing-imports-the-testing-kit': ['src/gate/response.ts', "import '../testing/test-clock.js';"],
  'core-imports-no-framework': ['src/gate/throw.ts', "import 'express';"],
  'nestjs-adapter-knows-no-platform': [
    'src/adapters/nestjs/options.ts',
    "import '@nestjs/platform-express';",
  ],
  'redis-client-only-in-the-redis-store': ['src/stores/memory/options.ts', "import 'ioredis';"],
  'core-imports-no-redis-store': ['src/limiter/sleep.ts', "import '../stores/redis/cluster-slot.js';"],
  'prom-client-only-in-metrics': ['src/telemetry/otel/create-otel-metrics.ts', "import 'prom-client';"],
  'opentelemetry-only-in-otel': [
    'src/telemetry/prometheus/create-metrics.ts',
    "import '@opentelemetry/api';",
  ],
  'grpc-and-yaml-only-in-the-service': ['src/limiter/sleep.ts', "import 'yaml';"],
  'library-never-imports-the-demo': ['src/core/logger.ts', "import '../../demo/main.js';"],
  'library-imports-only-declared-packages': ['src/core/duration.ts', "import 'fast-check';"],
  'no-unresolvable': ['src/core/logger.ts', "import './nowhere.js';"],
};

const copies: string[] = [];
after(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** The rules' violations on a copy of the project's src/ with `plants` appended. */
async function violations(plants: readonly (readonly [string, string])[]): Promise<Set<string>> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-layers-'));
  copies.push(dir);
  for (const path of ['src', 'demo', 'package.json', 'tsconfig.json'])
    cpSync(join(ROOT, path), join(dir, path), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  for (const [file, line] of plants) appendFileSync(join(dir, file), `\n${line}\n`);
  // The command CI runs (`npm run check:layers`), on the copy.
  const run = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
      'src',
      '--config',
      CONFIG,
      '--output-type',
      'json',
    ],
    { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const { summary } = JSON.parse(run.stdout) as {
    summary: { violations: { rule: { name: string }; from: string; to: string }[] };
  };
  return new Set(summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} -> ${to}`));
}

it('names a planted import for every rule, and each plant is refused by the rule it was planted for', async () => {
  assert.deepEqual(
    Object.keys(PLANTS).sort(),
    config.forbidden.map(({ name }) => name).sort(),
    'one plant per rule',
  );
  const found = [...(await violations(Object.values(PLANTS)))];
  const missed = Object.entries(PLANTS)
    .filter(([rule, [file]]) => !found.some((violation) => violation.startsWith(`${rule}: ${file} -> `)))
    .map(([rule, [file]]) => `${rule} (planted in ${file})`);
  assert.deepEqual(missed, [], `every rule refuses its plant; found:\n${found.join('\n')}`);
});

it('finds nothing to refuse in the real tree', async () => {
  assert.deepEqual([...(await violations([]))], []);
});
