// Real demo processes for end-to-end tests: the demo's entry points started as npm would, their output collected.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STARTUP_TIMEOUT_MS = 10_000;
// setpriv ties each demo to this test process, so even a SIGKILLed test run leaves no server behind.
const SETPRIV = spawnSync('setpriv', ['--version']).status === 0;

export const MEMORY_DEMO = 'demo/main.ts';
export const REDIS_DEMO = 'demo/main-redis.ts';

export interface Demo {
  readonly child: ChildProcess;
  readonly output: () => string;
}

/** Runs a demo as `npm start` / `npm run start:redis` do. */
export function launchDemo(entry: string, env: Record<string, string>): Demo {
  const argv = [process.execPath, '--import', 'tsx', entry];
  const [command, ...args] = SETPRIV ? ['setpriv', '--pdeathsig', 'KILL', '--', ...argv] : argv;
  const child = spawn(command as string, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return { child, output: () => output };
}

/** Resolves once the demo says it listens on `port`; throws with its output if it exits or takes too long. */
export async function waitForListening(demo: Demo, port: number): Promise<void> {
  await waitForOutput(demo, `listening on http://127.0.0.1:${port}`);
}

export async function waitForOutput(demo: Demo, text: string, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!demo.output().includes(text)) {
    if (demo.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the demo never printed ${JSON.stringify(text)}:\n${demo.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
