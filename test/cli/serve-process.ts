// `tollgate serve` as a child process, for the command's tests: started as a user would, its output collected, never left running.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = ['--import', 'tsx', 'src/cli.ts'];
/** Starting tsx takes a second or two on a slow machine; nothing here should take ten times that. */
export const TIMEOUT_MS = 20_000;

/** The environment of the tests' process without the variables the command reads, unless given. */
function environment(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(REDIS_|FAIL_OPEN$|REQUIRE_REDIS$|PORT$)/.test(name)),
  );
  return { ...inherited, ...env };
}

export interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the command to its exit. */
export function run(args: readonly string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI, ...args],
      { cwd: ROOT, env: environment(env), timeout: TIMEOUT_MS },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export interface Serving {
  readonly child: ChildProcess;
  readonly grpcPort: number;
  readonly httpPort: number;
  /** What it has written to stderr so far: its log. */
  readonly log: () => string;
}

const children: ChildProcess[] = [];

/** `tollgate serve --json` on free ports, resolved once it has printed its ports. */
export function serve(args: readonly string[], env: Record<string, string> = {}): Promise<Serving> {
  const all = [...CLI, 'serve', '--grpc-port', '0', '--http-port', '0', '--json', ...args];
  const child = spawn(process.execPath, all, { cwd: ROOT, env: environment(env) });
  children.push(child);
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ports within ${TIMEOUT_MS} ms: ${err}`)), TIMEOUT_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      const { grpcPort, httpPort } = JSON.parse(out.slice(0, out.indexOf('\n'))) as Serving;
      resolve({ child, grpcPort, httpPort, log: () => err });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before printing its ports: ${err}`));
    });
  });
}

/** Sends `signal` and resolves with the exit code (null if a signal ended it). */
export function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    child.once('exit', (code, killedBy) => {
      clearTimeout(timer);
      resolve(killedBy === null ? code : null);
    });
    child.kill(signal);
  });
}

const folders: string[] = [];

/** SIGKILLs, by pid, every process these helpers started that still runs, and removes their folders. */
export function cleanUp(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(child.pid, 'SIGKILL');
  }
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
}

/**
 * A folder holding `limits.yaml`: `perYear` hits a year per `client` in `domain`. The window is epoch-aligned on the
 * real clock: a year's ends once in 365 days, where a day's would reset the counts of a run crossing midnight UTC.
 */
export function limitsFolder(domain: string, perYear: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-serve-'));
  folders.push(dir);
  writeFileSync(
    join(dir, 'limits.yaml'),
    `domain: ${domain}\ndescriptors:\n  - key: client\n    rate_limit:\n      unit: year\n      requests_per_unit: ${perYear}\n`,
  );
  return dir;
}
