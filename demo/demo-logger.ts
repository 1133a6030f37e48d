// The demos' output: pino JSON lines and plain lines on stdout, written so that a closed or slow stdout can neither block, crash nor hold up an exit.
import pino from 'pino';
import type { DemoLogger } from './request-log.js';

let stdoutBroken: boolean | undefined;
/** What a reader that stalls may leave queued before lines are dropped: a demo must not grow without bound. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

/**
 * Writes a line (with its newline) to stdout, or drops it once stdout is broken or a stalled reader has left 4 MB
 * queued. Never throws, never blocks.
 *
 * Why not pino's default destination: it is sonic-boom on fd 1, which pino flushes synchronously when the
 * process exits, and sonic-boom answers any failed write there but EAGAIN by sleeping 100 ms and trying again,
 * for ever. With stdout a closed pipe, a line still queued at `process.exit()` (the drain logs two in a row)
 * hung the exit for good. process.stdout instead queues what a pipe cannot take yet (an exit drops it) and
 * reports a closed pipe (EPIPE) as an 'error' event, which would crash the process unheard (console.log
 * included): heard here, it only stops the output.
 */
export function writeStdoutLine(line: string): void {
  if (stdoutBroken === undefined) {
    stdoutBroken = false;
    process.stdout.on('error', () => {
      stdoutBroken = true;
    });
  }
  if (stdoutBroken || process.stdout.writableLength > MAX_QUEUED_BYTES) return;
  try {
    // A file is written synchronously, so a full disk throws here rather than in an event.
    process.stdout.write(line);
  } catch {
    stdoutBroken = true;
  }
}

/** The demos' structured logs: JSON lines on stdout, through `writeStdoutLine`. */
export function createDemoLogger(): DemoLogger {
  return pino({}, { write: writeStdoutLine });
}
