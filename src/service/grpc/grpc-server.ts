// `tollgate serve`'s gRPC server: Envoy's RateLimitService and the standard health service, on @grpc/grpc-js.
import type * as Grpc from '@grpc/grpc-js';
import { configError, environmentError } from '../../core/errors.js';
import { optionalPeer } from '../../core/optional-peer.js';
import {
  hostOption,
  knownKeys,
  optionalFunction,
  portOption,
  positiveInteger,
  timerMs,
} from '../../core/validate.js';
import type { RateLimitRequest, RateLimitResponse } from '../protocol/messages.js';
import { HealthService, healthServiceDefinition } from './health-service.js';
import {
  type CallResult,
  REFERENCE_HEALTH_NAME,
  RLS_SERVICE,
  rlsServiceDefinition,
  shouldRateLimitHandler,
} from './rls-service.js';

export interface GrpcServerOptions {
  readonly host: string;
  /** 0 for any free port: the one chosen is the server's `port`. */
  readonly port: number;
  /** The decision. Rejecting with an ERR_TOLLGATE_ARGUMENT error answers INVALID_ARGUMENT, anything else UNAVAILABLE. */
  readonly shouldRateLimit: (request: RateLimitRequest) => Promise<RateLimitResponse>;
  /**
   * Whether health checks answer SERVING (for '', the rate limit service's full name and the reference's
   * `ratelimit`); false while draining.
   */
  readonly serving: () => boolean;
  /** The largest request accepted; a larger one is answered INVALID_ARGUMENT, counted `invalid`. Default 64 KiB. */
  readonly maxMessageBytes?: number;
  /** Each ShouldRateLimit call's time in ms (by `now`) and how it ended. */
  readonly onRequest?: (ms: number, result: CallResult) => void;
  /** A call that failed past its decoding (answered UNAVAILABLE), or an `onRequest` that threw. */
  readonly onError?: (error: unknown) => void;
  /** How often health watchers are told of a change. Default 1000 ms. */
  readonly healthPollMs?: number;
  /** Default `performance.now`. */
  readonly now?: () => number;
}

export interface GrpcServer {
  /** The port listened on (the one chosen, for port 0). */
  readonly port: number;
  /**
   * Health watchers are told NOT_SERVING and their streams ended; calls in flight get `graceMs` to finish, then the
   * connections are cut. Resolves once closed; a second call returns the same promise.
   */
  close(graceMs: number): Promise<void>;
}

const OPTIONS = [
  'host',
  'port',
  'shouldRateLimit',
  'serving',
  'maxMessageBytes',
  'onRequest',
  'onError',
  'healthPollMs',
  'now',
];
const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;
const DEFAULT_HEALTH_POLL_MS = 1000;
/** grpc-js keeps message lengths in a signed 32-bit integer. */
const MAX_MESSAGE_BYTES = 2 ** 31 - 1;
/**
 * What grpc-js itself receives, at least: past its limit it answers RESOURCE_EXHAUSTED before any handler runs, so
 * the call goes uncounted. Set well above `maxMessageBytes` (4 MiB, or 4 times it) so that the method refuses an
 * oversize request itself, INVALID_ARGUMENT and counted; only a far larger one is left to grpc-js, unread.
 */
const RECEIVE_BYTES = 4 * 1024 * 1024;

/** Starts the server on `host:port` (insecure: the service sits beside its proxy). Options are checked first. */
export async function startGrpcServer(options: GrpcServerOptions): Promise<GrpcServer> {
  const settings = resolve(options);
  const grpc = optionalPeer<typeof Grpc>('@grpc/grpc-js', 'tollgate serve');
  const server = new grpc.Server({
    'grpc.max_receive_message_length': Math.min(
      MAX_MESSAGE_BYTES,
      Math.max(RECEIVE_BYTES, 4 * settings.maxMessageBytes),
    ),
    // Channelz stays on, though its per-call bookkeeping costs about a sixth of an empty call's time (16.7k against
    // 19.4k a second, measured): without it grpc-js's forceShutdown leaves calls in flight open for ever (grpc-js
    // 1.14), and a drain must end them.
  });
  const health = new HealthService(
    ['', RLS_SERVICE, REFERENCE_HEALTH_NAME],
    options.serving,
    settings.healthPollMs,
  );
  server.addService(rlsServiceDefinition(settings.maxMessageBytes), {
    ShouldRateLimit: shouldRateLimitHandler({
      shouldRateLimit: options.shouldRateLimit,
      onRequest: options.onRequest,
      onError: options.onError,
      now: settings.now,
    }),
  });
  server.addService(healthServiceDefinition, { Check: health.check, Watch: health.watch });
  const port = await bind(grpc, server, options.host, options.port);
  let closed: Promise<void> | undefined;
  return {
    port,
    close(graceMs) {
      closed ??= shutdown(server, health, graceMs);
      return closed;
    },
  };
}

function resolve(options: GrpcServerOptions) {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('startGrpcServer', options, OPTIONS);
  hostOption('host', options.host);
  portOption('port', options.port);
  if (typeof options.shouldRateLimit !== 'function')
    throw configError('shouldRateLimit', 'must be a function', options.shouldRateLimit);
  if (typeof options.serving !== 'function')
    throw configError('serving', 'must be a function', options.serving);
  optionalFunction('onRequest', options.onRequest);
  optionalFunction('onError', options.onError);
  const maxMessageBytes = positiveInteger(
    'maxMessageBytes',
    options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
  );
  if (maxMessageBytes > MAX_MESSAGE_BYTES)
    throw configError('maxMessageBytes', `must be at most ${MAX_MESSAGE_BYTES}`, maxMessageBytes);
  return {
    maxMessageBytes,
    healthPollMs: timerMs('healthPollMs', options.healthPollMs ?? DEFAULT_HEALTH_POLL_MS),
    now: optionalFunction('now', options.now) ?? (() => performance.now()),
  };
}

function bind(grpc: typeof Grpc, server: Grpc.Server, host: string, port: number): Promise<number> {
  // An IPv6 address is bracketed in a gRPC target, as in a URL.
  const address = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolvePort, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) => {
      if (error === null) resolvePort(bound);
      else {
        server.forceShutdown();
        reject(
          environmentError(`the gRPC server cannot listen on ${address}: ${error.message}`, error, 'port'),
        );
      }
    });
  });
}

function shutdown(server: Grpc.Server, health: HealthService, graceMs: number): Promise<void> {
  health.close();
  return new Promise((done) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      done();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      done();
    });
  });
}
