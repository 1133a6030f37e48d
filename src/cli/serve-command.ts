// `tollgate serve`: the rate limit service on the store the environment names, until SIGINT or SIGTERM drains it.
import { TollgateError } from '../core/errors.js';
import { createRateLimitService, type RateLimitService } from '../service/runtime/rate-limit-service.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import { closeWithin, startExitBackstop } from './bounded-exit.js';
import { CliError, usageError } from './cli-error.js';
import { type CliLogger, cliLogger } from './cli-logger.js';
import { listenFailure } from './listen-failure.js';
import { connectStore, type Env, EnvError, type EnvStore, storeFromEnv } from './store-from-env.js';
import { SERVE_USAGE } from './usage.js';

export interface ServeOptions {
  readonly config: readonly string[];
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly host: string;
  readonly mergeDomains: boolean;
  readonly json: boolean;
}

/** How long calls in flight may run once a signal asks the service to stop: a decision takes milliseconds. */
const DRAIN_MS = 10_000;
/** How long the stores may take to close (Redis' QUIT) after the drain. */
const CLOSE_MS = 2_000;
/** What the exit itself may take past the drain and the close before the backstop ends the process. */
const EXIT_MARGIN_MS = 1_000;

/** Resolves once the service listens and its ports are printed; the signal handlers then own the process. */
export async function serveCommand(options: ServeOptions, env: Env): Promise<void> {
  const { json } = options;
  const logger = cliLogger(json);
  const stores = await serviceStores(env, logger, json);
  let service: RateLimitService;
  try {
    const connected = await connectStore(stores.chosen);
    logger[connected.level](connected.message);
    service = await createRateLimitService({
      config: options.config,
      store: stores.chosen.store,
      ...(stores.fallback === undefined ? {} : { fallbackStore: stores.fallback }),
      grpc: { host: options.host, port: options.grpcPort },
      http: { host: options.host, port: options.httpPort },
      mergeDomains: options.mergeDomains,
      logger,
    });
  } catch (error) {
    await closeWithin(stores.close, CLOSE_MS);
    throw new CliError(startFailure(error, options), 1, { json });
  }
  // Before the ports are printed: whoever reads them may signal at once, and the default would end it undrained.
  const stop = (signal: NodeJS.Signals) => {
    // Once only: a second signal while draining finds no handler, and Node's default ends the process.
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    void drain(signal, service, stores, logger);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { grpcPort, httpPort } = service;
  process.stdout.write(
    json
      ? `${JSON.stringify({ grpcPort, httpPort })}\n`
      : `Tollgate service: gRPC on ${hostPort(options.host, grpcPort)}, HTTP on ${hostPort(options.host, httpPort)}\n`,
  );
}

interface ServiceStores {
  readonly chosen: EnvStore;
  /** With Redis: where limits whose failure mode is `memory` count, in this process alone, while Redis is down. */
  readonly fallback: MemoryStore | undefined;
  readonly close: () => Promise<void>;
}

/** The store the environment names; a variable that cannot be used is a usage error, as an option would be. */
async function serviceStores(env: Env, logger: CliLogger, json: boolean): Promise<ServiceStores> {
  let chosen: EnvStore;
  try {
    chosen = await storeFromEnv(env, { logger });
  } catch (error) {
    if (error instanceof EnvError) throw usageError(error.message, SERVE_USAGE, json);
    throw error;
  }
  const fallback = chosen.kind === 'redis' ? new MemoryStore() : undefined;
  return {
    chosen,
    fallback,
    close: async () => {
      fallback?.close();
      await chosen.store.close();
    },
  };
}

/**
 * Stops accepting, lets the calls in flight finish, closes the stores, and exits: 0, or 1 when a step failed or
 * ran out of time. Never rejects, and a backstop ends the process should anything hang past every bound.
 */
async function drain(
  signal: NodeJS.Signals,
  service: RateLimitService,
  stores: ServiceStores,
  logger: CliLogger,
): Promise<void> {
  // Past the bounds of both steps below, each with its margin.
  startExitBackstop(DRAIN_MS + CLOSE_MS + 2 * EXIT_MARGIN_MS);
  logger.info(`${signal}: draining (up to ${DRAIN_MS / 1000} s for calls in flight)`);
  const drained = await closeWithin(() => service.close(DRAIN_MS), DRAIN_MS + EXIT_MARGIN_MS);
  // Closed even after a failed drain: Redis is told the connection ends rather than finding it cut.
  const closed = await closeWithin(stores.close, CLOSE_MS);
  const problem = drained ?? closed;
  if (problem === undefined) logger.info('drained; bye');
  else logger.error(`drained, but the close ${problem}; exiting 1`);
  process.exit(problem === undefined ? 0 : 1);
}

/** One line: the configuration's error (file, line, key), a port that cannot be listened on, or REQUIRE_REDIS. */
function startFailure(error: unknown, options: ServeOptions): string {
  if (error instanceof TollgateError && (error.option === 'grpc.port' || error.option === 'http.port')) {
    const grpc = error.option === 'grpc.port';
    const port = grpc ? options.grpcPort : options.httpPort;
    return `${grpc ? '--grpc-port' : '--http-port'}: ${listenFailure(listenError(error), port, options.host)}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The system call's error under the service's: the one whose `code` (EADDRINUSE...) says why. */
function listenError(error: TollgateError): unknown {
  let cause: unknown = error;
  while (cause instanceof TollgateError && cause.cause !== undefined) cause = cause.cause;
  return cause;
}

/** `host:port`, an IPv6 address bracketed as in a URL: `[::1]:8081`. */
function hostPort(host: string, port: number | undefined): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}
