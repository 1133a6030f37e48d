// `tollgate simulate`: the library's simulator on node:http and an in-memory store, until SIGINT or SIGTERM.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simulatorHandler } from '../simulator/server/simulator-handler.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import { CliError, errorText } from './cli-error.js';
import { cliLogger } from './cli-logger.js';
import { listenFailure } from './listen-failure.js';

export interface SimulateOptions {
  readonly port: number;
  readonly host: string;
  readonly json: boolean;
}

/** How long requests in flight may run once a signal asks the simulator to stop: a simulation takes under 1 s. */
const DRAIN_MS = 5_000;
/** How often a drain closes connections gone idle since it began: their requests have been answered. */
const IDLE_SWEEP_MS = 100;

/** Resolves once the simulator listens and its URL is printed; the signal handlers then own the process. */
export async function simulateCommand({ port, host, json }: SimulateOptions): Promise<void> {
  const store = new MemoryStore();
  const server = createServer(simulatorHandler({ liveStore: store, logger: cliLogger(json) }));
  try {
    await listen(server, port, host);
  } catch (error) {
    store.close();
    throw new CliError(listenFailure(error, port, host), 1, { json });
  }
  // A server that fails while it runs (out of file descriptors, say) ends the command with one line, not a stack.
  server.on('error', (error) => {
    process.stderr.write(errorText(new CliError(`the server failed: ${error.message}`, 1, { json })));
    store.close();
    process.exit(1);
  });
  const stop = () => {
    // Once only: a second signal while draining finds no handler, and Node's default ends the process.
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    const deadline = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      store.close();
      process.exit(0);
    });
    // Idle keep-alive connections (a browser keeps several), now or once their request is answered, would hold
    // the close open for no request; the requests in flight are let finish, up to the deadline.
    server.closeIdleConnections();
  };
  // Before the URL is printed: whoever reads it may signal at once, and the default would end the process undrained.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const bound = server.address() as AddressInfo;
  const url = serverUrl(host, bound);
  process.stdout.write(
    json ? `${JSON.stringify({ url, port: bound.port })}\n` : `Tollgate simulator: ${url}\n`,
  );
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * The URL to open on this machine: a wildcard address (all interfaces) is no address a browser can open, so the
 * loopback address of its family stands for it; a literal IPv6 address goes in brackets.
 */
function serverUrl(host: string, bound: AddressInfo): string {
  const shown = bound.address === '0.0.0.0' ? '127.0.0.1' : bound.address === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${bound.port}/`;
}
