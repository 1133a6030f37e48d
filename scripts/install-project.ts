// What the install check shares: this checkout's manifest, the check list, and running commands in a project.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

/** The end of a long output: a failed suite's summary and its last failures. */
export function tail(output: string): string {
  return output.trim().split('\n').slice(-60).join('\n');
}
