// The `tollgate` command run for real, as a child process: its help, version, usage errors, exit codes and the simulator it serves.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type StartedUpload, startedUpload } from '../harness/started-upload.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = ['--import', 'tsx', 'src/cli.ts'];
/** Starting tsx takes a second or two on a slow machine; nothing here should take ten times that. */
const TIMEOUT_MS = 20_000;
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the command to its exit. PORT is unset unless given, so the default port is the command's own. */
function run(args: readonly string[], env: Record<string, string> = {}): Promise<Result> {
  const { PORT: _, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI, ...args],
      { cwd: ROOT, env: { ...inherited, ...env }, timeout: TIMEOUT_MS },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const children: ChildProcess[] = [];

/** The child's stderr so far, for what a test expects on it (nothing, mostly). */
const stderrOf = new WeakMap<ChildProcess, () => string>();

/** Starts a long-running command and resolves with its first line of output, once it has printed it. */
function start(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; line: string }> {
  const { PORT: _, ...inherited } = process.env;
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...inherited, ...env } });
  children.push(child);
  let err = '';
  stderrOf.set(child, () => err);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`no output within ${TIMEOUT_MS} ms: ${err}`)),
      TIMEOUT_MS,
    );
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      resolve({ child, line: out.slice(0, out.indexOf('\n')) });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before printing a line: ${err}`));
    });
  });
}

/** Resolves with the exit code (null if a signal ended it), or rejects if the process outlives the timeout. */
function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    child.once('exit', (code, killedBy) => {
      clearTimeout(timer);
      resolve(killedBy === null ? code : null);
    });
  });
}

/** Sends `signal` and resolves with the exit code. */
function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  const exit = exited(child);
  child.kill(signal);
  return exit;
}

/** A POST /api/simulate whose headers the server has taken (it said to continue), with its body begun. */
function upload(url: string, body: string): Promise<StartedUpload> {
  return startedUpload(new URL('api/simulate', url), body);
}

/** An idle keep-alive connection to `url`, after one request on it: `closed` resolves when the server closes it. */
function idleConnection(url: string): Promise<{ closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('api/live-routes', url), { agent: new Agent({ keepAlive: true }) }, (res) => {
      const socket = res.socket;
      const closed = new Promise<void>((ended) => socket.once('close', () => ended()));
      res.resume();
      res.on('end', () => resolve({ closed }));
    });
    req.on('error', reject).end();
  });
}

/** A port something else is listening on, until `release`. */
async function takenPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as { port: number };
  return { port, release: () => new Promise((resolve) => holder.close(() => resolve())) };
}

describe('tollgate command', { timeout: 120_000 }, () => {
  after(() => {
    // By pid, and only the processes these tests started.
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        process.kill(child.pid, 'SIGKILL');
      }
    }
  });

  it('--version prints the package version', async () => {
    for (const flag of ['--version', '-v']) {
      assert.deepEqual(await run([flag]), { code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it('--help, -h and help print the usage on stdout', async () => {
    const help = await run(['--help']);
    assert.equal(help.code, 0);
    assert.equal(help.stderr, '');
    assert.match(help.stdout, /^Usage: tollgate <command>/);
    assert.match(help.stdout, /simulate/);
    assert.deepEqual(await run(['-h']), help);
    assert.deepEqual(await run(['help']), help);
  });

  it('help simulate and simulate --help print the command usage', async () => {
    const help = await run(['help', 'simulate']);
    assert.equal(help.code, 0);
    assert.equal(help.stderr, '');
    assert.match(help.stdout, /^Usage: tollgate simulate \[--port <port>\] \[--host <host>\] \[--json\]/);
    assert.match(help.stdout, /--port <port> .*PORT/);
    assert.deepEqual(await run(['simulate', '--help']), help);
    assert.deepEqual(await run(['simulate', '-h']), help);
  });

  it('answers an unknown command, or none, with exit 2 and the usage on stderr', async () => {
    for (const [args, message] of [
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['help', 'frobnicate'], 'unknown command "frobnicate"'],
      [[], 'a command is required'],
      [['--frobnicate'], 'unknown option --frobnicate'],
      // --json is an option of simulate only: help and the version are text, and say so in text.
      [['--version', '--json'], 'unknown option --json'],
      [['--help', '--json'], 'unknown option --json'],
    ] as const) {
      const result = await run(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.equal(result.stdout, '');
      assert.ok(result.stderr.startsWith(`tollgate: ${message}\n\nUsage: tollgate <command>`), result.stderr);
    }
  });

  it('answers a bad option of simulate with exit 2, naming it, and the command usage', async () => {
    for (const [args, env, message] of [
      [['simulate', '--port', 'http'], {}, '--port must be a port number from 0 to 65535 (received "http")'],
      [['simulate', '--port=65536'], {}, '--port must be a port number from 0 to 65535 (received "65536")'],
      [['simulate', '--port'], {}, '--port needs a value'],
      [['simulate', '--json=yes'], {}, '--json takes no value'],
      [['simulate', '--verbose'], {}, 'unknown option --verbose'],
      [['simulate', 'now'], {}, 'unexpected argument "now"'],
      // An option is no value: --json here is a mistake, not the host, and the error is text as --json was not given.
      [['simulate', '--host', '--json'], {}, '--host needs a value'],
      [['simulate', '--port', '--json'], {}, '--port needs a value'],
      [
        ['simulate'],
        { PORT: '-1' },
        'the PORT variable must be a port number from 0 to 65535 (received "-1")',
      ],
    ] as const) {
      const result = await run(args, env);
      assert.equal(result.code, 2, args.join(' '));
      assert.equal(result.stdout, '');
      assert.ok(result.stderr.startsWith(`tollgate: ${message}\n\nUsage: tollgate simulate`), result.stderr);
    }
  });

  it('with --json, reports a usage error as one JSON line on stderr', async () => {
    const result = await run(['simulate', '--json', '--port', '70000']);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.deepEqual(JSON.parse(result.stderr), {
      error: '--port must be a port number from 0 to 65535 (received "70000")',
      code: 2,
    });
    assert.equal(result.stderr.split('\n').length, 2);
    const unknown = await run(['simulate', '--json', '--verbose']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, `${JSON.stringify({ error: 'unknown option --verbose', code: 2 })}\n`);
  });

  it('answers a port in use with exit 1 and one line, in text or JSON', async () => {
    const { port, release } = await takenPort();
    try {
      assert.deepEqual(await run(['simulate', '--port', String(port)]), {
        code: 1,
        stdout: '',
        stderr: `tollgate: port ${port} is in use\n`,
      });
      assert.deepEqual(await run(['simulate', `--port=${port}`, '--json']), {
        code: 1,
        stdout: '',
        stderr: `${JSON.stringify({ error: `port ${port} is in use`, code: 1 })}\n`,
      });
    } finally {
      await release();
    }
  });

  it('simulate --port 0 --json prints its URL, serves the page and runs simulations, and exits 0 on SIGTERM', async () => {
    const { child, line } = await start(['simulate', '--port', '0', '--json']);
    const printed = JSON.parse(line) as { url: string; port: number };
    assert.ok(printed.port > 0);
    assert.equal(printed.url, `http://127.0.0.1:${printed.port}/`);
    const page = await fetch(printed.url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Tollgate simulator<\/title>/);
    const simulation = await fetch(new URL('api/simulate', printed.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        policies: [{ kind: 'fixed-window', limit: 1, windowMs: 1000 }],
        arrivals: [0, 1],
      }),
    });
    assert.equal(simulation.status, 200);
    const { policies } = (await simulation.json()) as { policies: { summary: { admitted: number } }[] };
    assert.equal(policies[0]?.summary.admitted, 1);
    // A live route, limited on the command's own store.
    assert.equal((await fetch(new URL('api/data', printed.url))).headers.get('ratelimit-remaining'), '9');
    assert.equal(await stop(child, 'SIGTERM'), 0);
  });

  it('simulate prints one line of text by default, with --port=N too, and exits 0 on SIGINT', async () => {
    const { child, line } = await start(['simulate', '--port=0', '--host', '127.0.0.1']);
    assert.match(line, /^Tollgate simulator: http:\/\/127\.0\.0\.1:\d+\/$/);
    const url = line.slice('Tollgate simulator: '.length);
    assert.equal((await fetch(url)).status, 200);
    assert.equal(await stop(child, 'SIGINT'), 0);
  });

  it('on SIGTERM, answers a request whose body is still arriving, then exits 0', async () => {
    const { child, line } = await start(['simulate', '--port', '0', '--json']);
    const { url } = JSON.parse(line) as { url: string };
    const idle = await idleConnection(url);
    const body = JSON.stringify({
      policies: [{ kind: 'fixed-window', limit: 1, windowMs: 1000 }],
      arrivals: [0, 1],
    });
    const inFlight = await upload(url, body);
    const exit = exited(child);
    child.kill('SIGTERM');
    // The idle connection closing says the drain has begun; only then does the rest of the body go.
    await idle.closed;
    inFlight.finish();
    const answer = await inFlight.answer;
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.body) as { policies: unknown[] }).policies.length, 1);
    assert.equal(await exit, 0);
    assert.equal(stderrOf.get(child)?.(), '');
  });

  it('logs nothing for a client that drops its upload, and still answers others', async () => {
    const { child, line } = await start(['simulate', '--port', '0', '--json']);
    const { url } = JSON.parse(line) as { url: string };
    const dropped = await upload(url, JSON.stringify({ arrivals: [0] }));
    dropped.answer.catch(() => {}); // Cut on purpose.
    dropped.cut();
    assert.equal((await fetch(url)).status, 200);
    assert.equal(await stop(child, 'SIGTERM'), 0);
    assert.equal(stderrOf.get(child)?.(), '');
  });

  it('answers an unknown route with 404 in JSON', async () => {
    const { child, line } = await start(['simulate', '--port', '0', '--json']);
    const { url } = JSON.parse(line) as { url: string };
    const response = await fetch(new URL('nowhere', url));
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), { error: 'GET /nowhere is not a simulator route' });
    assert.equal(await stop(child, 'SIGTERM'), 0);
  });

  it('listens on the PORT variable when --port is not given, and --port wins over it', async () => {
    const { child, line } = await start(['simulate', '--json'], { PORT: '0' });
    const { port } = JSON.parse(line) as { port: number };
    // The default would be 3000: a free port chosen by the system shows PORT=0 was used.
    assert.notEqual(port, 3000);
    assert.ok(port > 0);
    assert.equal(await stop(child, 'SIGTERM'), 0);
    const overridden = await start(['simulate', '--port', '0', '--json'], { PORT: 'not-a-port' });
    assert.ok((JSON.parse(overridden.line) as { port: number }).port > 0);
    assert.equal(await stop(overridden.child, 'SIGTERM'), 0);
  });

  it('prints a URL this machine can open when listening on every address', async () => {
    for (const [host, shown] of [
      ['0.0.0.0', '127.0.0.1'],
      ['::', '[::1]'],
      ['::1', '[::1]'],
    ] as const) {
      const { child, line } = await start(['simulate', '--host', host, '--port', '0', '--json']);
      const { url, port } = JSON.parse(line) as { url: string; port: number };
      assert.equal(url, `http://${shown}:${port}/`, host);
      assert.equal((await fetch(url)).status, 200, host);
      assert.equal(await stop(child, 'SIGTERM'), 0);
    }
  });

  it('exits 0 quietly when whatever reads its output has gone', async () => {
    for (const args of [['--help'], ['--version']]) {
      const child = spawn(process.execPath, [...CLI, ...args], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      // Closed before the command has started, so that its first write meets a closed pipe.
      child.stdout?.destroy();
      let err = '';
      child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
      assert.equal(await exited(child), 0, args.join(' '));
      assert.equal(err, '', args.join(' '));
    }
  });
});
