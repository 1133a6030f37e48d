// Every TypeScript and JavaScript snippet in README.md runs as written, each in a process of its own with `tollgate` mapped onto src/.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { COMMANDS } from '../../src/cli/usage.js';
import * as tollgate from '../../src/index.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  readonly scripts: Record<string, string>;
  readonly exports: Record<string, string | { readonly import?: { readonly default?: string } }>;
};
const PRELOAD = pathToFileURL(fileURLToPath(new URL('snippet-preload.ts', import.meta.url))).href;
/** Starting tsx and a framework takes a second or two on a slow machine; nothing here should take ten times that. */
const TIMEOUT_MS = 20_000;
/** Two snippets at a time: the machines this runs on have two cores. */
const CONCURRENCY = 2;

interface CodeBlock {
  /** The line of the opening fence, from 1. */
  readonly line: number;
  readonly lang: string;
  /** The words after the language: `continued` runs the block after the runnable one before it. */
  readonly meta: readonly string[];
  /** The nearest heading above the block, to name it in the report. */
  readonly heading: string;
  readonly code: string;
}

function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    const open = /^(`{3,}|~{3,})\s*([\w-]*)\s*(.*)$/.exec(text);
    if (open === null) {
      heading = /^#+\s+(.*)$/.exec(text)?.[1] ?? heading;
      continue;
    }
    const [, fence = '', lang = '', meta = ''] = open;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? '').trimEnd().startsWith(fence); i++)
      body.push(lines[i] ?? '');
    const words = meta.split(/\s+/).filter((word) => word !== '');
    blocks.push({ line: start + 1, lang: lang.toLowerCase(), meta: words, heading, code: body.join('\n') });
  }
  return blocks;
}

const RUNNABLE: Readonly<Record<string, string>> = {
  ts: '.ts',
  typescript: '.ts',
  js: '.mjs',
  javascript: '.mjs',
};

interface Snippet {
  readonly name: string;
  /** The file it runs as: `.ts` is type-checked too. */
  readonly file: string;
  readonly code: string;
  /** It reads REDIS_URL, so it runs against a throwaway redis-server. */
  readonly needsRedis: boolean;
}

/** The runnable blocks; a `continued` one carries the code of the blocks it continues. */
function snippets(blocks: readonly CodeBlock[], dir: string): Snippet[] {
  const found: Snippet[] = [];
  let previous = '';
  for (const block of blocks) {
    const ext = RUNNABLE[block.lang];
    if (ext === undefined) continue;
    const continued = block.meta.includes('continued');
    if (continued && previous === '')
      throw new Error(`README.md:${block.line}: a \`continued\` snippet needs a runnable snippet before it`);
    const code = continued ? `${previous}\n${block.code}` : block.code;
    previous = code;
    found.push({
      name: `README.md:${block.line} (${block.heading})`,
      file: join(dir, `readme-${block.line}${ext}`),
      code,
      needsRedis: /\bREDIS_URL\b/.test(code),
    });
  }
  return found;
}

/** `tollgate` and each subpath, as package.json exports them, mapped onto the source each is built from. */
function sourcePaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const [subpath, target] of Object.entries(PACKAGE.exports)) {
    const built = typeof target === 'string' ? target : target.import?.default;
    if (built === undefined || !built.startsWith('./dist/')) continue;
    const source = `src/${built.slice('./dist/'.length).replace(/\.js$/, '.ts')}`;
    paths[`tollgate${subpath.slice(1)}`] = [join(ROOT, source)];
  }
  return paths;
}

/**
 * The snippets' own project, under .tmp/ so that their other imports resolve from this repository's
 * node_modules. Its tsconfig maps `tollgate` for tsx (which honours `paths`) and tsc alike, and is the
 * repository's (strict) one, plus decorators as NestJS uses them; unused names are a snippet's right.
 */
function writeProject(dir: string, all: readonly Snippet[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
  const tsconfig = {
    extends: join(ROOT, 'tsconfig.json'),
    compilerOptions: {
      noUnusedLocals: false,
      noUnusedParameters: false,
      experimentalDecorators: true,
      moduleDetection: 'force',
      paths: sourcePaths(),
    },
    // Relative, or tsx would not apply these options to the snippets.
    include: ['*.ts'],
  };
  writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  for (const snippet of all) writeFileSync(snippet.file, `${snippet.code}\n`);
}

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
  /** The port of the first server the snippet started, and the status it answered a request with. */
  readonly port?: number;
  readonly status?: number;
}

/** Collects a stream's text and resolves with its first line, or undefined once it ends without one. */
function firstLine(stream: NodeJS.ReadableStream): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
    });
    stream.once('end', () => resolve(undefined));
  });
}

/**
 * Runs one snippet to its end. One that starts a server (the preload reports its port on descriptor 3) is sent
 * `GET /`, then SIGTERM; one that does not must exit on its own. Past TIMEOUT_MS it is killed.
 */
async function run(snippet: Snippet, cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', PRELOAD, snippet.file], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<Pick<Outcome, 'code' | 'signal'>>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  try {
    const ports = child.stdio[3];
    const line =
      ports === null || ports === undefined ? undefined : await firstLine(ports as NodeJS.ReadableStream);
    if (line === undefined) return { ...(await exited), output };
    const port = Number(line);
    let status: number | undefined;
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      status = response.status;
    } catch (error) {
      output += `\n[test] GET / failed: ${(error as Error).message}`;
    }
    child.kill('SIGTERM');
    return { ...(await exited), output, port, ...(status === undefined ? {} : { status }) };
  } finally {
    clearTimeout(timer);
  }
}

function assertRan(snippet: Snippet, outcome: Outcome): void {
  const killed = outcome.signal === 'SIGKILL' ? ` (still running after ${TIMEOUT_MS} ms)` : '';
  const report = `${snippet.name}: exit ${outcome.code ?? outcome.signal}${killed}\n${outcome.output}`;
  if (outcome.port === undefined) {
    assert.equal(outcome.code, 0, report);
    return;
  }
  assert.ok(
    outcome.status !== undefined && outcome.status < 500,
    `its server answered GET / ${outcome.status}; ${report}`,
  );
  // Ended by the test's SIGTERM, or on its own after closing what it opened.
  assert.ok(outcome.code === 0 || outcome.signal === 'SIGTERM', report);
}

/** The environment of a snippet: no PORT or REDIS_URL of the caller's. */
function snippetEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { PORT: _port, REDIS_URL: _redis, ...inherited } = process.env;
  return { ...inherited, ...extra };
}

mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const DIR = mkdtempSync(join(ROOT, '.tmp', 'readme-snippets-'));
const SNIPPETS = snippets(codeBlocks(README), DIR);
writeProject(DIR, SNIPPETS);
after(() => rmSync(DIR, { recursive: true, force: true }));

describe('README snippets', { concurrency: CONCURRENCY }, () => {
  it("type-check under the repository's tsconfig", async () => {
    const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
    const child = spawn(tsc, ['-p', join(DIR, 'tsconfig.json')], { cwd: DIR });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    // tsc names the temp files; README.md:<line> is in each file's name.
    assert.equal(code, 0, output);
  });

  for (const snippet of SNIPPETS.filter((s) => !s.needsRedis)) {
    it(snippet.name, async () => assertRan(snippet, await run(snippet, DIR, snippetEnv())));
  }
});

const ON_REDIS = SNIPPETS.filter((snippet) => snippet.needsRedis);
if (ON_REDIS.length > 0) {
  describeWithRedis('README snippets on Redis', () => {
    let redis: RedisServer;
    before(async () => {
      redis = await startRedisServer();
    });
    after(() => redis.stop());
    describe('each against a throwaway redis-server in REDIS_URL', { concurrency: CONCURRENCY }, () => {
      for (const snippet of ON_REDIS) {
        it(snippet.name, async () =>
          assertRan(snippet, await run(snippet, DIR, snippetEnv({ REDIS_URL: redis.url }))),
        );
      }
    });
  });
}

describe('README commands', () => {
  it('name only npm scripts that exist', () => {
    const named = [...README.matchAll(/\bnpm (?:run(?: -s)? ([\w:.-]+)|(start|test)\b)/g)].map(
      ([, script, lifecycle]) => script ?? lifecycle ?? '',
    );
    assert.ok(named.length > 0);
    for (const script of named) assert.ok(script in PACKAGE.scripts, `npm run ${script}: no such script`);
  });

  it('name only tollgate commands that exist, the simulator among them', () => {
    const named = [...README.matchAll(/\bnpx tollgate ([a-z][\w-]*)/g)].map(([, command]) => command ?? '');
    assert.ok(named.includes('simulate'), 'README.md shows `npx tollgate simulate`');
    const known: readonly string[] = COMMANDS;
    for (const command of named) assert.ok(known.includes(command), `tollgate ${command}: no such command`);
  });

  it('run a block marked `continued` after the one before it', () => {
    const markdown = [
      '## A',
      '```ts',
      'const a = 1;',
      '```',
      '```sh',
      'ls',
      '```',
      '```ts continued',
      'a;',
      '```',
    ];
    const [first, second] = snippets(codeBlocks(markdown.join('\n')), '/snippets');
    assert.equal(first?.code, 'const a = 1;');
    assert.equal(second?.code, 'const a = 1;\na;');
    assert.equal(second?.name, 'README.md:8 (A)');
  });
});

/**
 * The policy a README snippet builds, evaluated as written with every export of `tollgate` in scope: the README
 * is this repository's own text, and its claims are about exactly that expression.
 */
function snippetPolicy(code: string): tollgate.AnyPolicy {
  const expression = /\bpolicy: (\w+\(\{[^}]*\}\)),/.exec(code)?.[1];
  assert.ok(expression !== undefined, `no \`policy: name({ ... }),\` in:\n${code}`);
  const names = Object.keys(tollgate);
  return new Function(...names, `return ${expression};`)(...Object.values(tollgate));
}

/** When a client that asks every millisecond for `spanMs` is let through, on a clock the test moves. */
function greedyAdmissions(policy: tollgate.AnyPolicy, spanMs: number): number[] {
  let now = 0;
  const store = new tollgate.MemoryStore({ clock: () => now, autoCleanup: false });
  const limiter = tollgate.createLimiter({ policy, store, scope: 'greedy' });
  const admitted: number[] = [];
  for (; now < spanMs; now++) while (limiter.consumeSync('client').allowed) admitted.push(now);
  store.close();
  return admitted;
}

/** The most admissions in any `windowMs` (a window opens at each admission, which is where the most fit). */
function mostInAnyWindow(admitted: readonly number[], windowMs: number): number {
  return Math.max(
    ...admitted.map((start) => admitted.filter((t) => t >= start && t < start + windowMs).length),
  );
}

describe('README claims', () => {
  it('the outbound limiter keeps to its "N per second", and the token bucket beside it would not', () => {
    const block = codeBlocks(README).find((b) => b.code.includes("scope: 'partner-api'"));
    assert.ok(block !== undefined, 'README.md has the outbound example (scope partner-api)');
    const claimed = Number(/their documented limit: (\d+) per second/.exec(block.code)?.[1]);
    assert.ok(claimed > 0, 'its comment states the partner limit');
    const admitted = greedyAdmissions(snippetPolicy(block.code), 5_000);
    assert.equal(admitted.filter((t) => t < 1_000).length, claimed, 'admitted in the first second');
    assert.equal(mostInAnyWindow(admitted, 1_000), claimed, 'the most admitted in any second');
    // The prose beside it: a bucket of 10 refilled at 10 per second sends 19 in its first second.
    assert.match(README, /capacity 10 refilled at 10 per second would not: [^.]*19 in the first second/);
    const bucket = greedyAdmissions(tollgate.tokenBucket({ capacity: 10, refillPerSecond: 10 }), 1_000);
    assert.equal(bucket.length, 19);
  });
});
