// A drain's bounds: each closing step given a time, and a backstop that ends the process if the exit still does not come.
import { Worker } from 'node:worker_threads';

/**
 * The backstop runs in a thread of its own, because what hangs may be this one: a synchronous loop (a log
 * destination retrying a write for ever inside `process.exit()`, say) would never let a timer of this thread
 * fire. Only SIGKILL is sure to end a process whose main thread is stuck, so that is what it sends.
 */
const BACKSTOP = `
const { workerData } = require('node:worker_threads');
setTimeout(() => process.kill(workerData.pid, 'SIGKILL'), workerData.ms);
`;

/** Kills this process `ms` from now unless it has exited: start it before anything that could hang. */
export function startExitBackstop(ms: number): void {
  new Worker(BACKSTOP, { eval: true, workerData: { pid: process.pid, ms } }).unref();
}

/** Runs `close`, resolving undefined when it finishes within `ms`, else what went wrong. Never rejects. */
export async function closeWithin(
  close: (() => Promise<void> | void) | undefined,
  ms: number,
): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`took over ${ms} ms`), ms);
  });
  const done = Promise.resolve()
    .then(() => close?.())
    .then(
      () => undefined,
      (error: unknown) => `failed (${error instanceof Error ? error.message : String(error)})`,
    );
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}
