// createRateLimitService: the configuration loaded and watched, the decider over the store, the gRPC and HTTP servers, health.
import { inContext, TollgateError } from '../../core/errors.js';
import { MemoryStore } from '../../stores/memory/memory-store.js';
import type { ServiceConfig } from '../config/types.js';
import { createDecider } from '../engine/decider.js';
import { startGrpcServer } from '../grpc/grpc-server.js';
import { startHttpServer } from '../http/http-server.js';
import { createServiceMetrics, type ServiceMetrics } from '../metrics/service-metrics.js';
import type { RateLimitRequest, RateLimitResponse } from '../protocol/messages.js';
import type { ConfigWatcher } from './config-watcher.js';
import { watchConfig } from './config-watcher.js';
import { LiveConfig, NO_DOMAIN } from './live-config.js';
import {
  type RateLimitServiceOptions,
  resolveServiceOptions,
  type ServiceSettings,
} from './service-options.js';
import { checkServicePeers } from './service-peers.js';
import { type StoreHealth, watchStoreHealth } from './store-health.js';

/**
 * A server's port as the options given make it: a number, or undefined when they turned it off (`false`); both
 * when the options' type allows either.
 */
export type PortOf<O, K extends 'grpc' | 'http'> = K extends keyof O
  ? [O[K]] extends [false]
    ? undefined
    : false extends O[K]
      ? number | undefined
      : number
  : number;

export interface RateLimitService<GrpcPort = number | undefined, HttpPort = number | undefined> {
  /** The port gRPC listens on (the one chosen, for port 0); undefined with `grpc: false`. */
  readonly grpcPort: GrpcPort;
  /** The port HTTP listens on; undefined with `http: false`. */
  readonly httpPort: HttpPort;
  /** The configuration requests are decided under now. */
  readonly config: ServiceConfig;
  /** Whether the service can decide: a domain is loaded, its store answers, and it is not closing. */
  readonly healthy: boolean;
  /** Loads the files again now; rejects with the error (file, line, key) when they are bad, keeping the last good ones. */
  reload(): Promise<void>;
  /** The service's metrics in Prometheus' text format, as GET /metrics answers. */
  metricsText(): string;
  /** Stops accepting, gives calls in flight up to `graceMs` (default 10 s), then closes the servers. */
  close(graceMs?: number): Promise<void>;
}

/** How often the store is asked whether it answers: health requests read the last answer. */
const HEALTH_PROBE_MS = 1_000;
const DEFAULT_GRACE_MS = 10_000;

/**
 * Loads the configuration (rejecting with the error naming file, line and key when it is bad), starts the servers
 * asked for and watches the files. A reload swaps the whole configuration at once: a request decides under the one
 * current when it arrived. Counts survive it, as a limit's counters are named by its place in the configuration.
 *
 * @example
 * const service = await createRateLimitService({ config: '/config', store: new RedisStore({ url }) });
 */
export async function createRateLimitService<O extends RateLimitServiceOptions>(
  options: O,
): Promise<RateLimitService<PortOf<O, 'grpc'>, PortOf<O, 'http'>>> {
  const settings = resolveServiceOptions(options);
  checkServicePeers(settings.grpc !== undefined);
  const ownStore = settings.store === undefined ? new MemoryStore() : undefined;
  const store = settings.store ?? (ownStore as MemoryStore);
  const metrics = createServiceMetrics();
  const loadOptions = { mergeDomains: settings.mergeDomains };
  const live = new LiveConfig(settings.paths, loadOptions, (ok) => metrics.configLoad(ok), settings.logger);
  const decider = createDecider({
    store,
    observer: metrics,
    ...(settings.fallbackStore === undefined ? {} : { fallbackStore: settings.fallbackStore }),
  });
  const parts = new Parts(ownStore);
  try {
    // Watched from before the first load, so a change made while it loads is seen.
    if (settings.watch)
      parts.watcher = await watchConfig({ paths: settings.paths, onChange: () => live.reloadLogged() });
    await live.load();
    metrics.configLoad(true);
    parts.health = await watchStoreHealth(store, HEALTH_PROBE_MS);
    const whyUnhealthy = () => unhealthy(parts, live);
    // The configuration is read once per request, as it arrives: a reload meanwhile leaves the request on its own.
    const shouldRateLimit = (request: RateLimitRequest) => decider.shouldRateLimit(live.current, request);
    await startServers(settings, parts, {
      shouldRateLimit,
      whyUnhealthy,
      config: () => live.current,
      metrics,
    });
    return {
      // As the options say: each server asked for has started, or this has rejected.
      grpcPort: parts.grpc?.port as PortOf<O, 'grpc'>,
      httpPort: parts.http?.port as PortOf<O, 'http'>,
      get config() {
        return live.current;
      },
      get healthy() {
        return whyUnhealthy() === undefined;
      },
      reload: () => live.reload(),
      metricsText: () => metrics.text(),
      close: (graceMs = DEFAULT_GRACE_MS) => parts.close(graceMs),
    };
  } catch (error) {
    await parts.close(0);
    throw error;
  }
}

interface Server {
  readonly port: number;
  close(graceMs: number): Promise<void>;
}

/** What the service has started, so that a failed start and `close()` stop exactly that. */
class Parts {
  watcher: ConfigWatcher | undefined;
  health: StoreHealth | undefined;
  grpc: Server | undefined;
  http: Server | undefined;
  closing = false;
  #closed: Promise<void> | undefined;

  constructor(readonly ownStore: MemoryStore | undefined) {}

  /** Once: a second call waits for the first. */
  close(graceMs: number): Promise<void> {
    this.#closed ??= this.#close(graceMs);
    return this.#closed;
  }

  async #close(graceMs: number): Promise<void> {
    // Unhealthy first, so a load balancer stops sending while the calls in flight finish.
    this.closing = true;
    this.watcher?.close();
    this.health?.stop();
    await Promise.all([this.grpc?.close(graceMs), this.http?.close(graceMs)]);
    this.ownStore?.close();
  }
}

interface Handlers {
  readonly shouldRateLimit: (request: RateLimitRequest) => Promise<RateLimitResponse>;
  /** Why health checks fail now; undefined while healthy. */
  readonly whyUnhealthy: () => string | undefined;
  readonly config: () => ServiceConfig;
  readonly metrics: ServiceMetrics;
}

async function startServers(
  { grpc, http, logger }: ServiceSettings,
  parts: Parts,
  { shouldRateLimit, whyUnhealthy, config, metrics }: Handlers,
): Promise<void> {
  if (grpc !== undefined) {
    parts.grpc = await listening('grpc', () =>
      startGrpcServer({
        ...grpc,
        shouldRateLimit,
        serving: () => whyUnhealthy() === undefined,
        onRequest: (ms, result) => metrics.request('grpc', ms, result),
        onError: (error) => logger.error(error, '[tollgate] serve: a gRPC call failed'),
      }),
    );
  }
  if (http !== undefined) {
    parts.http = await listening('http', () =>
      startHttpServer({
        ...http,
        shouldRateLimit,
        config,
        healthy: async () => {
          const reason = whyUnhealthy();
          return reason === undefined ? { ok: true } : { ok: false, reason };
        },
        metricsText: () => metrics.text(),
        observer: metrics,
        logger,
      }),
    );
  }
}

/** Why health checks fail: the drain, no domain to decide for, or the store; undefined while healthy. */
function unhealthy(parts: Parts, live: LiveConfig): string | undefined {
  if (parts.closing) return 'the service is closing';
  if (live.current.domains.length === 0) return NO_DOMAIN;
  if (parts.health?.up !== true) return 'the store does not answer';
  return undefined;
}

/**
 * The server `start` resolves with, or its error (a configuration error whose cause is the listen failure, with the
 * `code` that tells why, EADDRINUSE say) naming the option of this server, `grpc.port` or `http.port`: either may be
 * the one that failed.
 */
async function listening(name: 'grpc' | 'http', start: () => Promise<Server>): Promise<Server> {
  try {
    return await start();
  } catch (error) {
    if (error instanceof TollgateError && error.option === 'port')
      throw inContext(error, (message) => message, `${name}.port`);
    throw error;
  }
}
