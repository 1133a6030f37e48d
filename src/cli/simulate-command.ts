// `tollgate simulate`: the library's simulator on node:http and an in-memory store, until SIGINT or SIGTERM.
import { createServer, type Server } from 'node:http';
import { simulatorHandler } from '../simulator/simulator-handler.js';
import { MemoryStore } from '../stores/memory-store.js';
import { CliError } from './cli-error.js';

export interface SimulateOptions {
  readonly port: number;
  readonly host: string;
  readonly json: boolean;
}

/** Resolves once the simulator listens and its URL is printed; the signal handlers then own the process. */
export async function simulateCommand({ port, host, json }: SimulateOptions): Promise<void> {
  const store = new MemoryStore();
  const server = createServer(simulatorHandler({ liveStore: store }));
  try {
    await listen(server, port, host);
  } catch (error) {
    store.close();
    throw new CliError(listenFailure(error, port, host), 1);
  }
  const bound = (server.address() as { port: number }).port;
  // A literal IPv6 address goes in brackets in a URL.
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`;
  process.stdout.write(json ? `${JSON.stringify({ url, port: bound })}\n` : `Tollgate simulator: ${url}\n`);
  const stop = () => {
    // Once only: a second signal while closing finds no handler, and Node's default ends the process.
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    server.close(() => {
      store.close();
      process.exit(0);
    });
    // Idle keep-alive sockets (a browser keeps several) would hold the close open; a request is answered at once.
    server.closeAllConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
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

/** One line saying what stopped the listen, in the user's terms rather than the system call's. */
function listenFailure(error: unknown, port: number, host: string): string {
  const { code, message } = error as NodeJS.ErrnoException;
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} is in use`;
    case 'EACCES':
      return `port ${port} needs privileges this user does not have (choose one above 1023)`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host ${host} cannot be resolved`;
    default:
      return `cannot listen on ${host} port ${port}: ${message}`;
  }
}
