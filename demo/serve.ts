// Listening and draining, shared by the demos: on SIGTERM/SIGINT stop accepting, give in-flight requests 10 s and the close 2 s, and exit within 13 s whatever hangs.
import type { RequestListener, Server } from 'node:http';
import { createServer } from 'node:http';
import { closeWithin, startExitBackstop } from '../src/cli/bounded-exit.js';
import { writeStdoutLine } from './demo-logger.js';

export interface ServeOptions {
  readonly port: number;
  readonly host?: string;
  /** How long in-flight requests may run once a drain begins. Default 10 s. */
  readonly drainMs?: number;
  /** How long `onClose` may take. Default 2 s. */
  readonly closeMs?: number;
  /** Runs after the listener has drained: close stores and connections here. */
  readonly onClose?: () => Promise<void> | void;
  /** Default: a line on stdout. A log call that throws is skipped. */
  readonly log?: (message: string) => void;
}

/** What the exit itself may take past the drain and the close before the backstop ends the process. */
export const EXIT_MARGIN_MS = 1_000;
/** How often a drain closes connections gone idle since it began: their requests are answered. */
const IDLE_SWEEP_MS = 100;

export async function serve(handler: RequestListener, options: ServeOptions): Promise<Server> {
  const { port, host = '127.0.0.1', drainMs = 10_000, closeMs = 2_000 } = options;
  const log = options.log ?? ((message: string) => writeStdoutLine(`${message}\n`));
  // Logging must never stop a drain.
  const say = (message: string) => {
    try {
      log(message);
    } catch {
      // Nowhere left to report it.
    }
  };
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  say(
    `tollgate demo listening on http://${host}:${typeof address === 'object' && address ? address.port : port}`,
  );

  let draining = false;
  const drain = async (signal: string) => {
    if (draining) return;
    draining = true;
    // Started before anything that could hang; the exit terminates it.
    startExitBackstop(drainMs + closeMs + EXIT_MARGIN_MS);
    say(`${signal}: draining (up to ${drainMs / 1000} s for in-flight requests)`);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Idle keep-alive connections, now or once their request is answered, would hold the drain for no request.
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const deadline = setTimeout(() => server.closeAllConnections(), drainMs);
    await closed;
    clearInterval(sweep);
    clearTimeout(deadline);
    const problem = await closeWithin(options.onClose, closeMs);
    say(problem === undefined ? 'drained; bye' : `drained, but the close ${problem}; exiting 1`);
    process.exit(problem === undefined ? 0 : 1);
  };
  // drain never rejects: the close and every log call are contained.
  process.once('SIGTERM', () => void drain('SIGTERM'));
  process.once('SIGINT', () => void drain('SIGINT'));
  return server;
}
