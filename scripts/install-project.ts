// What the install check shares: this checkout's manifest, the check list, and running commands in a project.
import { type ChildProcess, execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, unknown>;
  files: string[];
};
/** What failed so far: the check exits 1 when any did. */
export const failures: string[] = [];
/**
 * Node's flag that turns `require()` of an ES module off (on by default from Node 20.19): CommonJS code run with it
 * shows that nothing it loads relies on that, as on every Node 20 before 20.19. Empty where Node has no such flag.
 */
export const NO_REQUIRE_ESM = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module')
  ? ['--no-experimental-require-module']
  : [];

/** One line of the report, `ok` or `FAIL`, and the miss remembered. */
export function check(ok: boolean, what: string, detail = ''): void {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok || detail === '' ? '' : `: ${detail}`}\n`);
  if (!ok) failures.push(what);
}

/** A command's output; throws when it fails. */
export function run(command: string, args: readonly string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `node -e` in the project: the exit status and what it printed. */
export function node(cwd: string, args: readonly string[]): { status: number; output: string } {
  try {
    return { status: 0, output: run(process.execPath, args, cwd) };
  } catch (error) {
    const failed = error as { status?: number; stdout?: string; stderr?: string };
    return { status: failed.status ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/**
 * A command's exit status, what it printed and all its output (stdout then stderr, a warning of Node's included),
 * without blocking the checks that run beside it.
 */
export function runAsync(
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ status: number; stdout: string; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ status, stdout, output: `${stdout}${stderr}` });
    });
  });
}

/** `npm install` of `packages` in the project, from the registry (cached packages first); throws when it fails. */
export async function npmInstall(project: string, packages: readonly string[]): Promise<void> {
  const args = ['install', '--no-audit', '--no-fund', '--prefer-offline', ...packages];
  const installed = await runAsync('npm', args, project);
  if (installed.status !== 0)
    throw new Error(`npm ${args.join(' ')} in ${project}: ${tail(installed.output)}`);
}

/** An empty project of that module `type` in `dir`, then `packages` installed in it. */
export async function freshProject(
  dir: string,
  type: 'module' | 'commonjs',
  packages: readonly string[],
): Promise<string> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'app', private: true, type })}\n`);
  await npmInstall(dir, packages);
  return dir;
}

/** `tollgate` and its subpath, as an app names them: `.` is `tollgate`, `./node` is `tollgate/node`. */
export function specifierOf(subpath: string): string {
  return `${manifest.name}${subpath.slice(1)}`;
}

/** The end of a long output: a failed suite's summary and its last failures. */
export function tail(output: string): string {
  return output.trim().split('\n').slice(-60).join('\n');
}

/** The first line `child` prints on stdout (`what` it prints there, for the error), within 30 s. */
export function firstLine(child: ChildProcess, what: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    // Generous: the bundlers beside the checks work on this process's thread and may hold its timers back.
    const timer = setTimeout(() => reject(new Error(`no ${what} within 30 s: ${out}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(out.split('\n')[0] as string);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing ${what}`)));
  });
}
