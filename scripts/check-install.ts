// The package as a user gets it: packed from this checkout, installed in fresh projects, and used there: every subpath
// imported and required, the extension examples held to tollgate/testing's contracts, the CLI and its simulator run,
// TypeScript apps under each module setting, bundled apps and NestJS apps run until limited, and the install checked
// for demo-only dependencies. The projects install concurrently. Exits 1 on a miss.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundledAppsRun } from './install-bundlers.js';
import { dropInsAreTheirModule, requiresEverySubpath } from './install-commonjs.js';
import { examplesPass } from './install-examples.js';
import { expressRateLimitAnswersAlike } from './install-express-rate-limit.js';
import { NEST_MAJORS, nestAppRuns } from './install-nestjs.js';
import {
  check,
  failures,
  freshProject,
  manifest,
  NO_REQUIRE_ESM,
  node,
  npmInstall,
  ROOT,
  run,
  specifierOf,
} from './install-project.js';
import { SERVICE_PEERS, serveNamesMissingPeer, serviceProblems } from './install-service.js';
import { pagePaths, simulatorProblems } from './install-simulator.js';
import { typescriptAppsRun } from './install-typescript.js';

/**
 * Packages only the demo, the benchmark or the tests use: an install of the library must not bring them, the
 * libraries the drop-ins replace included (their subpaths load and run without them).
 */
const DEMO_ONLY = [
  ...['uplot', 'express', 'pino', 'fastify', 'hono', 'koa', 'ioredis', 'redis', 'prom-client'],
  ...['express-rate-limit', '@fastify/rate-limit', '@nestjs/throttler'],
  ...SERVICE_PEERS,
];
const NEST = ['@nestjs/common', '@nestjs/core', 'reflect-metadata', 'rxjs'];
/**
 * Subpaths built on classes of their framework (Hono's HTTPException, Nest's HttpException and decorators): they load
 * once the app has that framework, which the check installs after the bare-install imports. Every other subpath
 * must load with nothing beside tollgate.
 */
const LOADS_WITH: Readonly<Record<string, readonly string[]>> = {
  './hono': ['hono'],
  './nestjs': NEST,
  './nestjs-throttler': NEST,
};
const SUBPATHS = Object.keys(manifest.exports).filter((key) => key !== './package.json');
/** Subpaths that load only beside Nest: required in the NestJS projects, each of a supported major. */
const NEST_SUBPATHS = SUBPATHS.filter((subpath) => LOADS_WITH[subpath] === NEST);
/** The pages of docs/ the package ships (error messages point to them), named one by one in "files". */
const SHIPPED_DOCS = manifest.files.filter((file) => file.startsWith('docs/'));
/** Files a user needs from the tarball, and what must never be in it (docs/ but SHIPPED_DOCS). */
const MUST_SHIP = [
  'dist/index.js',
  'dist/index.d.ts',
  'dist/cjs/index.js',
  'dist/cjs/index.d.ts',
  'dist/cjs/package.json',
  'dist/cli.js',
  'simulator/index.html',
  'proto/envoy/service/ratelimit/v3/rls.proto',
  ...SHIPPED_DOCS,
];
const MUST_NOT_SHIP = [/\.map$/, /^docs\//, /\.png$/, /^demo\//, /^test\//, /^bench\//, /^src\//];

function packed(destination: string): { tarball: string; files: string[] } {
  const [report] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', destination], ROOT)) as {
    filename: string;
    files: { path: string }[];
  }[];
  if (!report) throw new Error('npm pack printed no report');
  return { tarball: join(destination, report.filename), files: report.files.map((file) => file.path) };
}

function shipsWhatItShould(files: readonly string[]): void {
  for (const file of MUST_SHIP) check(files.includes(file), `the tarball ships ${file}`);
  const unwanted = files.filter(
    (file) => MUST_NOT_SHIP.some((pattern) => pattern.test(file)) && !SHIPPED_DOCS.includes(file),
  );
  check(
    unwanted.length === 0,
    `the tarball ships no maps, demo, sources or docs but ${SHIPPED_DOCS.join(', ')}`,
    unwanted.join(', '),
  );
}

function importable(project: string, subpath: string): void {
  const specifier = specifierOf(subpath);
  const loaded = node(project, ['--input-type=module', '-e', `await import('${specifier}')`]);
  check(loaded.status === 0, `import('${specifier}') loads`, loaded.output.trim());
}

/** Each subpath needing a framework, imported without it, names the missing package. */
function namesMissingFramework(project: string): void {
  for (const [subpath, peers] of Object.entries(LOADS_WITH)) {
    const specifier = specifierOf(subpath);
    const bare = node(project, ['--input-type=module', '-e', `await import('${specifier}')`]);
    check(
      bare.status !== 0 && bare.output.includes(`'${peers[0]}'`),
      `import('${specifier}') without ${peers[0]} names the missing package`,
      bare.output.trim(),
    );
  }
}

/** An optional peer missing when its subpath is called: a configuration error, not a crash at import. */
function missingPeerIsConfigError(project: string, subpath: string, factory: string, peer: string): void {
  const called = node(project, [
    '--input-type=module',
    '-e',
    `import { ${factory} } from '${specifierOf(subpath)}';
     try { ${factory}(); process.exit(3); } catch (error) { process.exit(error.code === 'ERR_TOLLGATE_CONFIG' ? 0 : 4); }`,
  ]);
  check(called.status === 0, `${factory}() without ${peer} is a configuration error`);
}

/** `tollgate --help`, `--version`, and `tollgate simulate` serving its page and a simulation. */
async function commandRuns(project: string, files: readonly string[]): Promise<void> {
  const bin = join(project, 'node_modules', '.bin', 'tollgate');
  const help = node(project, [bin, '--help']);
  check(help.status === 0 && help.output.includes('simulate'), '`tollgate --help` prints the usage');
  const version = node(project, [bin, '--version']);
  check(version.status === 0 && version.output.trim() === manifest.version, '`tollgate --version` prints it');
  const paths = pagePaths(files);
  check(paths.includes('/') && paths.includes('/app.js'), 'the tarball ships the page and its entry script');
  const problems = await simulatorProblems(project, paths);
  check(
    problems.length === 0,
    `\`tollgate simulate\` serves the ${paths.length} page files, runs a simulation and exits 0 on SIGTERM`,
    problems.join('; '),
  );
}

/** The ES module project: tollgate alone, then Express, then the frameworks the last subpaths need. */
async function esModuleProject(work: string, tarball: string, files: readonly string[]): Promise<string> {
  const project = await freshProject(join(work, 'esm'), 'module', [tarball]);
  for (const subpath of SUBPATHS.filter((key) => LOADS_WITH[key] === undefined)) importable(project, subpath);
  namesMissingFramework(project);
  examplesPass(project);
  missingPeerIsConfigError(project, './metrics', 'createMetrics', 'prom-client');
  missingPeerIsConfigError(project, './otel', 'createOtelMetrics', '@opentelemetry/api');
  await commandRuns(project, files);
  const installed = `${run('npm', ['ls', '--all', '--parseable'], project)}\n`;
  const extra = DEMO_ONLY.filter((name) => installed.includes(`/node_modules/${name}\n`));
  check(extra.length === 0, `the install holds none of ${DEMO_ONLY.join(', ')}`, extra.join(', '));
  const bare = serveNamesMissingPeer(project);
  check(bare.ok, '`tollgate serve` without @grpc/grpc-js and yaml exits 1 naming both', bare.output.trim());
  await npmInstall(project, ['express', ...new Set(Object.values(LOADS_WITH).flat()), ...SERVICE_PEERS]);
  for (const subpath of Object.keys(LOADS_WITH)) importable(project, subpath);
  const problems = await serviceProblems(project);
  check(
    problems.length === 0,
    '`tollgate serve` limits HTTP checks and gRPC calls exactly and exits 0 on SIGTERM',
    problems.join('; '),
  );
  return project;
}

/** The CommonJS project: every subpath but Nest's required, then TypeScript and bundled apps. */
async function commonJsProject(work: string, tarball: string): Promise<string> {
  const packages = [tarball, 'express', 'hono', 'typescript', '@types/node@20'];
  const project = await freshProject(join(work, 'cjs'), 'commonjs', packages);
  if (NO_REQUIRE_ESM.length === 0)
    process.stdout.write(`note: Node ${process.version} has no require(esm) to turn off\n`);
  await requiresEverySubpath(
    project,
    SUBPATHS.filter((subpath) => !NEST_SUBPATHS.includes(subpath)),
  );
  await dropInsAreTheirModule(project);
  await Promise.all([typescriptAppsRun(project), bundledAppsRun(project)]);
  return project;
}

/** Runs `part`; a throw (an install that failed) is one failed check, and the other parts go on. */
async function guarded<T>(what: string, part: Promise<T>): Promise<T | undefined> {
  try {
    return await part;
  } catch (error) {
    check(false, what, error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-install-'));
  try {
    const { tarball, files } = packed(work);
    shipsWhatItShould(files);
    const [esm, cjs] = await Promise.all([
      guarded('the ES module project', esModuleProject(work, tarball, files)),
      guarded('the CommonJS project', commonJsProject(work, tarball)),
      ...NEST_MAJORS.map((major) =>
        guarded(`the NestJS ${major} project`, nestAppRuns(work, tarball, major, NEST_SUBPATHS)),
      ),
    ]);
    if (esm !== undefined && cjs !== undefined) expressRateLimitAnswersAlike(esm, cjs);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stderr.write(`${failures.length} install check(s) failed\n`);
    process.exitCode = 1;
  }
}

await main();
