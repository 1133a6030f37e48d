// createRateLimitService's options: what each means, each checked once at wire-up and resolved to what the service runs on.
import { configError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { hostOption, knownKeys, loggerOption, portOption } from '../../core/validate.js';
import { isStore, type Store } from '../../stores/store.js';

/** Where a server listens. */
export interface ListenOptions {
  /** Default 127.0.0.1: the service has no authentication, so it is reachable from elsewhere only when asked. */
  readonly host?: string;
  /** 0 for any free port. Defaults: 8081 for gRPC, 8080 for HTTP, as envoyproxy/ratelimit's. */
  readonly port?: number;
}

/** A Logger that may also take the service's ordinary events (listening, reloaded, draining). */
export interface ServiceLogger extends Logger {
  info?(...args: unknown[]): void;
}

export interface RateLimitServiceOptions {
  /** envoyproxy/ratelimit's YAML: files, or folders whose files are all loaded. */
  readonly config: string | readonly string[];
  /** Where counts are kept. Default: a MemoryStore of the service's own, closed with it. */
  readonly store?: Store;
  /**
   * The store for the descriptors whose `failure_mode` asks to count in memory while the store is down: a
   * RedisStore with `fallback: 'memory'`, say. Default: `store`.
   */
  readonly fallbackStore?: Store;
  /** Envoy's gRPC rate limit service (envoy.service.ratelimit.v3). `false`: none. */
  readonly grpc?: ListenOptions | false;
  /** The HTTP check (nginx auth_request, Traefik ForwardAuth), /json, /healthcheck and /metrics. `false`: none. */
  readonly http?: ListenOptions | false;
  /**
   * Files of one domain add up to it, as the reference's MERGE_DOMAIN_CONFIG; a descriptor repeated across them
   * is still refused. Default false: a domain in two files is refused.
   */
  readonly mergeDomains?: boolean;
  /** Reload the configuration when its files change. Default true. */
  readonly watch?: boolean;
  /** Default console. */
  readonly logger?: ServiceLogger;
}

export interface ServiceSettings {
  readonly paths: readonly string[];
  readonly store: Store | undefined;
  readonly fallbackStore: Store | undefined;
  readonly grpc: Required<ListenOptions> | undefined;
  readonly http: Required<ListenOptions> | undefined;
  readonly mergeDomains: boolean;
  readonly watch: boolean;
  readonly logger: ServiceLogger;
}

const OPTIONS = ['config', 'store', 'fallbackStore', 'grpc', 'http', 'mergeDomains', 'watch', 'logger'];
const DEFAULT_HOST = '127.0.0.1';
/** envoyproxy/ratelimit's ports, so a gateway configured for it needs no change. */
export const DEFAULT_GRPC_PORT = 8081;
export const DEFAULT_HTTP_PORT = 8080;

/** Throws a configuration error naming the first option that is wrong; otherwise every option, resolved. */
export function resolveServiceOptions(options: RateLimitServiceOptions): ServiceSettings {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object with at least `config`', options);
  knownKeys('createRateLimitService', options, OPTIONS);
  const paths = typeof options.config === 'string' ? [options.config] : options.config;
  if (!Array.isArray(paths) || paths.length === 0 || !paths.every((p) => typeof p === 'string' && p !== ''))
    throw configError('config', 'must be a path, or a non-empty array of paths, to files or folders', paths);
  for (const name of ['store', 'fallbackStore'] as const) {
    const store = options[name];
    if (store !== undefined && !isStore(store))
      throw configError(name, 'must be a store (with evaluate() and reset())', store);
  }
  const watch = flag('watch', options.watch, true);
  const mergeDomains = flag('mergeDomains', options.mergeDomains, false);
  return {
    paths: [...paths],
    store: options.store,
    fallbackStore: options.fallbackStore,
    grpc: listen('grpc', options.grpc, DEFAULT_GRPC_PORT),
    http: listen('http', options.http, DEFAULT_HTTP_PORT),
    mergeDomains,
    watch,
    logger: loggerOption(options.logger, console),
  };
}

function flag(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw configError(option, 'must be a boolean', value);
  return value;
}

function listen(
  name: string,
  value: ListenOptions | false | undefined,
  defaultPort: number,
): Required<ListenOptions> | undefined {
  if (value === false) return undefined;
  if (value !== undefined && (typeof value !== 'object' || value === null))
    throw configError(name, 'must be { host, port } or false', value);
  knownKeys(name, value ?? {}, ['host', 'port']);
  return {
    host: hostOption(`${name}.host`, value?.host ?? DEFAULT_HOST),
    port: portOption(`${name}.port`, value?.port ?? defaultPort),
  };
}
