// The `tollgate` command run for real, as a child process: its help, version, usage errors, exit codes and the simulator it serves.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

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

/** Starts a long-running command and resolves with its first line of output, once it has printed it. */
function start(args: readonly string[]): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
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

/** Sends `signal` and resolves with the exit code, or rejects if the process outlives the timeout. */
function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`still running ${TIMEOUT_MS} ms after ${signal}`)),
      TIMEOUT_MS,
    );
    child.once('exit', (code, killedBy) => {
      clearTimeout(timer);
      resolve(killedBy === null ? code : null);
    });
    child.kill(signal);
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
});
