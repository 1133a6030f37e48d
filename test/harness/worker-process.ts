// A test's worker process: spawned with tsx and a JSON config, read line by line, killed by whoever started it.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export type WorkerProcess = ChildProcessByStdio<Writable, Readable, Readable>;

export interface Worker {
  readonly child: WorkerProcess;
  /** The worker's next line of output; rejects with its exit code and stderr once it has ended. */
  nextLine(): Promise<string>;
  /** Settles with the exit code when the process has closed. */
  readonly closed: Promise<number | null>;
}

/** Runs `script` with `config` as its argument; `started` sees the process first, so a failure can kill it. */
export function spawnWorker(
  script: string,
  config: unknown,
  started: (child: WorkerProcess) => void,
): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  started(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    async nextLine(): Promise<string> {
      const line = await lines.next();
      if (line.done !== true) return line.value;
      throw new Error(`worker ${child.pid} exited with code ${await closed}: ${stderr}`);
    },
    closed,
  };
}
