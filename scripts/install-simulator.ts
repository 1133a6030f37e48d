// The CLI's simulator as the installed package serves it: its page files, a simulation, and its stop.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { firstLine } from './install-project.js';

/**
 * The URL paths of the page files the tarball ships: `simulator/index.html` is served at `/`, every other page,
 * script and stylesheet at its path within `simulator/` (the handler's tests hold its table to exactly these).
 */
export function pagePaths(files: readonly string[]): string[] {
  return files
    .filter((file) => /^simulator\/.+\.(html|js|css)$/.test(file))
    .map((file) => (file === 'simulator/index.html' ? '/' : file.slice('simulator'.length)));
}

/**
 * Starts `tollgate simulate --port 0 --json`, fetches each of `paths` and a simulation, then stops it with SIGTERM:
 * what failed, if anything, the stop's exit code included.
 */
export async function simulatorProblems(project: string, paths: readonly string[]): Promise<string[]> {
  const bin = join(project, 'node_modules', '.bin', 'tollgate');
  const child: ChildProcess = spawn(bin, ['simulate', '--port', '0', '--json'], { cwd: project });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const problems: string[] = [];
  try {
    const line = await firstLine(child, 'its URL');
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
