// Listening and draining, shared by the demos: on SIGTERM/SIGINT stop accepting, give in-flight requests 10 s, close, exit 0.
import type { RequestListener, Server } from 'node:http';
import { createServer } from 'node:http';

export interface ServeOptions {
  readonly port: number;
  readonly host?: string;
  readonly drainMs?: number;
  /** Runs after the listener has drained: close stores and connections here. */
  readonly onClose?: () => Promise<void> | void;
  readonly log?: (message: string) => void;
}

export async function serve(handler: RequestListener, options: ServeOptions): Promise<Server> {
  const { port, host = '127.0.0.1', drainMs = 10_000, log = console.log } = options;
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  log(
    `tollgate demo listening on http://${host}:${typeof address === 'object' && address ? address.port : port}`,
  );

  let draining = false;
  const drain = async (signal: string) => {
    if (draining) return;
    draining = true;
    log(`${signal}: draining (up to ${drainMs / 1000} s for in-flight requests)`);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Idle keep-alive sockets would otherwise hold the drain open for no request at all.
    server.closeIdleConnections();
    const deadline = setTimeout(() => server.closeAllConnections(), drainMs);
    await closed;
    clearTimeout(deadline);
    await options.onClose?.();
    log('drained; bye');
    process.exit(0);
  };
  process.once('SIGTERM', () => void drain('SIGTERM'));
  process.once('SIGINT', () => void drain('SIGINT'));
  return server;
}
