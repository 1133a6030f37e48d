// The package as a user gets it: packed from this checkout, installed alone in an empty project, then every subpath
// imported, the extension examples held to tollgate/testing's contracts, the CLI and its simulator run, and the
// install checked for demo-only dependencies. Exits 1 on a miss.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, unknown>;
  files: string[];
};
/** Packages only the demo, the benchmark or the tests use: an install of the library must not bring them. */
const DEMO_ONLY = ['uplot', 'express', 'pino', 'fastify', 'hono', 'koa', 'ioredis', 'redis', 'prom-client'];
/**
 * Subpaths built on classes of their framework (Hono's HTTPException, Nest's HttpException and decorators): they load
 * once the app has that framework, which the check installs after the bare-install imports. Every other subpath
 * must load with nothing beside tollgate.
 */
const LOADS_WITH: Readonly<Record<string, readonly string[]>> = {
  './hono': ['hono'],
  './nestjs': ['@nestjs/common', '@nestjs/core', 'reflect-metadata', 'rxjs'],
};
/** The pages of docs/ the package ships (error messages point to them), named one by one in "files". */
const SHIPPED_DOCS = manifest.files.filter((file) => file.startsWith('docs/'));
/** Files a user needs from the tarball, and what must never be in it (docs/ but SHIPPED_DOCS). */
const MUST_SHIP = [
  'dist/index.js',
  'dist/index.d.ts',
  'dist/cli.js',
  'simulator/index.html',
  ...SHIPPED_DOCS,
];
const MUST_NOT_SHIP = [/\.map$/, /^docs\//, /\.png$/, /^demo\//, /^test\//, /^bench\//, /^src\//];
/**
 * The page whose examples, a custom store and a custom adapter with their tests, run in the project as written:
 * each is a `js` block whose first line is `// <file>.js: <what it is>`.
 */
const EXAMPLES_PAGE = 'docs/extending.md';
/** The contract suites the examples' tests must have run, by the name each prefixes its tests with. */
const CONTRACTS = ['store contract: ', 'adapter contract: '];

const failures: string[] = [];
function check(ok: boolean, what: string, detail = ''): void {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok || detail === '' ? '' : `: ${detail}`}\n`);
  if (!ok) failures.push(what);
}

function run(command: string, args: readonly string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `node -e` in the project: the exit status and what it printed. */
function node(cwd: string, args: readonly string[]): { status: number; output: string } {
  try {
    return { status: 0, output: run(process.execPath, args, cwd) };
  } catch (error) {
    const failed = error as { status?: number; stdout?: string; stderr?: string };
    return { status: failed.status ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

function packed(destination: string): { tarball: string; files: string[] } {
  const [report] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', destination], ROOT)) as {
    filename: string;
    files: { path: string }[];
  }[];
  if (!report) throw new Error('npm pack printed no report');
  return { tarball: join(destination, report.filename), files: report.files.map((file) => file.path) };
}

/**
 * The URL paths of the page files the tarball ships: `simulator/index.html` is served at `/`, every other page,
 * script and stylesheet at its path within `simulator/` (the handler's tests hold its table to exactly these).
 */
function pagePaths(files: readonly string[]): string[] {
  return files
    .filter((file) => /^simulator\/.+\.(html|js|css)$/.test(file))
    .map((file) => (file === 'simulator/index.html' ? '/' : file.slice('simulator'.length)));
}

/**
 * Starts `tollgate simulate --port 0 --json`, fetches each of `paths` and a simulation, then stops it with SIGTERM:
 * what failed, if anything, the stop's exit code included.
 */
async function simulatorProblems(project: string, paths: readonly string[]): Promise<string[]> {
  const bin = join(project, 'node_modules', '.bin', 'tollgate');
  const child: ChildProcess = spawn(bin, ['simulate', '--port', '0', '--json'], { cwd: project });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const problems: string[] = [];
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no URL within 10 s: ${out}`)), 10_000);
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve(out.split('\n')[0] as string);
        }
      });
      child.once('exit', (code) => reject(new Error(`exited ${code} before printing its URL`)));
    });
    const { url } = JSON.parse(line) as { url: string };
    for (const path of paths) {
      const { status } = await fetch(new URL(path.slice(1), url));
      if (status !== 200) problems.push(`GET ${path} answered ${status}`);
    }
    const simulation = await fetch(new URL('api/simulate', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        policies: [{ kind: 'fixed-window', limit: 5, windowMs: 1000 }],
        arrivals: [0, 1],
      }),
    });
    if (simulation.status !== 200) problems.push(`POST /api/simulate answered ${simulation.status}`);
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
  } finally {
    child.kill('SIGTERM');
  }
  const code = await exit;
  if (code !== 0) problems.push(`exited ${code} on SIGTERM`);
  return problems;
}

/**
 * An app written for express-rate-limit, its import aside: four option sets of its documentation's kind, each
 * asked until it rejects, on a clock mocked to one instant. Prints every answer's status, rate-limit fields, body
 * and the route's or handler's view of the request's figures, as one JSON line.
 */
function expressRateLimitApp(specifier: string): string {
  return `
import { once } from 'node:events';
import { request } from 'node:http';
import { mock } from 'node:test';
import express from 'express';
import { rateLimit } from '${specifier}';

mock.timers.enable({ apis: ['Date'], now: Date.UTC(2026, 0, 1, 12, 0, 0, 250) });
const configurations = [
  { windowMs: 15 * 60 * 1000, limit: 2, standardHeaders: 'draft-8', legacyHeaders: false },
  { windowMs: 60 * 1000, limit: 2 },
  { windowMs: 60 * 1000, limit: 1, standardHeaders: 'draft-7', message: { error: 'Slow down.' } },
  {
    max: async (req) => (req.get('x-plan') === 'pro' ? 3 : 2),
    standardHeaders: true,
    requestPropertyName: 'quota',
    handler: (req, res, next, options) =>
      res.status(options.statusCode).json({ quota: req.quota, windowMs: options.windowMs }),
  },
];
const get = (port) =>
  new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        const fields = Object.entries(res.headers).filter(([name]) => /ratelimit|retry-after/.test(name));
        resolve({ status: res.statusCode, fields: Object.fromEntries(fields.sort()), body });
      });
    }).on('error', reject).end();
  });
const answers = [];
for (const options of configurations) {
  const app = express();
  app.use(rateLimit(options));
  app.get('/', (req, res) => res.json(req[options.requestPropertyName ?? 'rateLimit']));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  for (let status = 0; status !== 429; ) {
    const answer = await get(server.address().port);
    answers.push(answer);
    status = answer.status;
  }
  server.close();
}
process.stdout.write(JSON.stringify(answers));
`;
}

/** The example files of EXAMPLES_PAGE, by file name. */
function examples(): Map<string, string> {
  const page = readFileSync(join(ROOT, EXAMPLES_PAGE), 'utf8');
  const files = new Map<string, string>();
  for (const [, code = '', file = ''] of page.matchAll(
    /^```js\n(\/\/ ([\w.-]+\.js): [^\n]*\n[\s\S]*?)^```$/gm,
  ))
    files.set(file, code);
  return files;
}

/**
 * Writes the examples into the project and runs their tests with `node --test`, tollgate/testing's suites on the
 * package as installed: no tsx, no TypeScript, nothing of this checkout.
 */
function examplesPass(project: string): void {
  const files = examples();
  for (const [file, code] of files) writeFileSync(join(project, file), code);
  const tests = [...files.keys()].filter((file) => file.endsWith('.test.js'));
  const ran = node(project, ['--test', '--test-reporter=tap', ...tests]);
  const missing = CONTRACTS.filter((contract) => !ran.output.includes(`- ${contract}`));
  check(
    ran.status === 0 && missing.length === 0,
    `${EXAMPLES_PAGE}'s store and adapter pass tollgate/testing's contracts under node --test (${tests.join(', ')})`,
    missing.length > 0 ? `no ${missing.join(', ')}suite ran: ${ran.output.trim()}` : tail(ran.output),
  );
}

/** The end of a long output: a failed suite's summary and its last failures. */
function tail(output: string): string {
  return output.trim().split('\n').slice(-60).join('\n');
}

function importable(project: string, subpath: string): void {
  const specifier = `${manifest.name}${subpath.slice(1)}`;
  const loaded = node(project, ['--input-type=module', '-e', `await import('${specifier}')`]);
  check(loaded.status === 0, `import('${specifier}') loads`, loaded.output.trim());
}

/** require() of an ES module works unflagged from Node 20.19 on. */
function requiresEsm(version: string): boolean {
  const [major = 0, minor = 0] = version.slice(1).split('.').map(Number);
  return major > 20 || (major === 20 && minor >= 19);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-install-'));
  try {
    const { tarball, files } = packed(work);
    for (const file of MUST_SHIP) check(files.includes(file), `the tarball ships ${file}`);
    const unwanted = files.filter(
      (file) => MUST_NOT_SHIP.some((pattern) => pattern.test(file)) && !SHIPPED_DOCS.includes(file),
    );
    check(
      unwanted.length === 0,
      `the tarball ships no maps, demo, sources or docs but ${SHIPPED_DOCS.join(', ')}`,
      unwanted.join(', '),
    );

    const project = join(work, 'app');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), '{ "name": "app", "private": true, "type": "module" }\n');
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], project);

    const subpaths = Object.keys(manifest.exports).filter((key) => key !== './package.json');
    for (const subpath of subpaths.filter((key) => LOADS_WITH[key] === undefined))
      importable(project, subpath);
    for (const [subpath, peers] of Object.entries(LOADS_WITH)) {
      const specifier = `${manifest.name}${subpath.slice(1)}`;
      const bare = node(project, ['--input-type=module', '-e', `await import('${specifier}')`]);
      check(
        bare.status !== 0 && bare.output.includes(`'${peers[0]}'`),
        `import('${specifier}') without ${peers[0]} names the missing package`,
        bare.output.trim(),
      );
    }
    examplesPass(project);
    if (requiresEsm(process.version)) {
      const required = node(project, ['-e', `require('${manifest.name}').createLimiter`]);
      check(required.status === 0, `require('${manifest.name}') works on Node ${process.version}`);
    } else {
      process.stdout.write(
        `skip require('${manifest.name}'): Node ${process.version} cannot require() ES modules\n`,
      );
    }
    const metrics = node(project, [
      '--input-type=module',
      '-e',
      `import { createMetrics } from '${manifest.name}/metrics';
       try { createMetrics(); process.exit(3); } catch (error) { process.exit(error.code === 'ERR_TOLLGATE_CONFIG' ? 0 : 4); }`,
    ]);
    check(metrics.status === 0, 'createMetrics() without prom-client is a configuration error');
    const otel = node(project, [
      '--input-type=module',
      '-e',
      `import { createOtelMetrics } from '${manifest.name}/otel';
       try { createOtelMetrics(); process.exit(3); } catch (error) { process.exit(error.code === 'ERR_TOLLGATE_CONFIG' ? 0 : 4); }`,
    ]);
    check(otel.status === 0, 'createOtelMetrics() without @opentelemetry/api is a configuration error');

    const bin = join(project, 'node_modules', '.bin', 'tollgate');
    const help = node(project, [bin, '--help']);
    check(help.status === 0 && help.output.includes('simulate'), '`tollgate --help` prints the usage');
    const version = node(project, [bin, '--version']);
    check(
      version.status === 0 && version.output.trim() === manifest.version,
      '`tollgate --version` prints it',
    );
    const paths = pagePaths(files);
    check(
      paths.includes('/') && paths.includes('/app.js'),
      'the tarball ships the page and its entry script',
    );
    const problems = await simulatorProblems(project, paths);
    check(
      problems.length === 0,
      `\`tollgate simulate\` serves the ${paths.length} page files, runs a simulation and exits 0 on SIGTERM`,
      problems.join('; '),
    );

    const installed = `${run('npm', ['ls', '--all', '--parseable'], project)}\n`;
    const extra = DEMO_ONLY.filter((name) => installed.includes(`/node_modules/${name}\n`));
    check(extra.length === 0, `the install holds none of ${DEMO_ONLY.join(', ')}`, extra.join(', '));

    // express-rate-limit answers in this checkout; the project gets Express alone beside tollgate.
    const theirs = node(ROOT, ['--input-type=module', '-e', expressRateLimitApp('express-rate-limit')]);
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', 'express'], project);
    const ours = node(project, [
      '--input-type=module',
      '-e',
      expressRateLimitApp(`${manifest.name}/express`),
    ]);
    check(
      theirs.status === 0 && ours.status === 0 && ours.output === theirs.output,
      'an express-rate-limit app, its import aside, runs on tollgate/express and answers as express-rate-limit does',
      `express-rate-limit: ${theirs.output.trim()}\ntollgate/express: ${ours.output.trim()}`,
    );

    run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', ...Object.values(LOADS_WITH).flat()],
      project,
    );
    for (const subpath of Object.keys(LOADS_WITH)) importable(project, subpath);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stderr.write(`${failures.length} install check(s) failed\n`);
    process.exitCode = 1;
  }
}

await main();
