// The package as a user gets it: packed from this checkout, installed alone in an empty project, then every subpath
// imported, the extension examples held to tollgate/testing's contracts, the CLI and its simulator run, and the
// install checked for demo-only dependencies. Exits 1 on a miss.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { examplesPass } from './install-examples.js';
import { check, failures, manifest, node, ROOT, run } from './install-project.js';
import { pagePaths, simulatorProblems } from './install-simulator.js';

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

function packed(destination: string): { tarball: string; files: string[] } {
  const [report] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', destination], ROOT)) as {
    filename: string;
    files: { path: string }[];
  }[];
  if (!report) throw new Error('npm pack printed no report');
  return { tarball: join(destination, report.filename), files: report.files.map((file) => file.path) };
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
