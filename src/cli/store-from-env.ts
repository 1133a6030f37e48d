// The store the environment names: REDIS_URL, REDIS_HOST/PORT/PASSWORD, REDIS_CLUSTER_NODES, FAIL_OPEN, REQUIRE_REDIS.
import type { Logger } from '../core/logger.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import type { RedisStore } from '../stores/redis/redis-store.js';
import type { RedisStoreOptions } from '../stores/redis/redis-store-options.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** An environment variable that cannot be used: the message names it and what it received. */
export class EnvError extends Error {}

export type EnvStore =
  | { readonly kind: 'memory'; readonly store: MemoryStore; readonly where: 'memory' }
  | {
      readonly kind: 'redis';
      readonly store: RedisStore;
      /** Where Redis is, for messages: never with the password a URL may carry. */
      readonly where: string;
      /** FAIL_OPEN (default 1): whether requests are allowed while Redis is unreachable. */
      readonly failOpen: boolean;
      /** REQUIRE_REDIS (default 0): refuse to start when Redis cannot be reached. */
      readonly requireRedis: boolean;
    };

export interface StoreFromEnvOptions {
  readonly logger: Logger;
  /** Redis even when no REDIS_* address variable is set (on 127.0.0.1:6379), as the Redis demo does. Default false. */
  readonly redisByDefault?: boolean;
}

const ADDRESS_VARIABLES = ['REDIS_URL', 'REDIS_HOST', 'REDIS_PORT', 'REDIS_CLUSTER_NODES'] as const;

/**
 * A MemoryStore unless a Redis address is set (or `redisByDefault`); then RedisStore, loaded only now, so a command
 * on memory never needs a Redis client installed. Throws an EnvError naming the first variable that is wrong.
 */
export async function storeFromEnv(env: Env, options: StoreFromEnvOptions): Promise<EnvStore> {
  const asked = ADDRESS_VARIABLES.some((name) => (env[name] ?? '') !== '');
  const failOpen = envFlag(env, 'FAIL_OPEN', true);
  const requireRedis = envFlag(env, 'REQUIRE_REDIS', false);
  if (!asked && options.redisByDefault !== true)
    return { kind: 'memory', store: new MemoryStore(), where: 'memory' };
  const address = redisAddress(env);
  const { RedisStore } = await import('../stores/redis/redis-store.js');
  const store = new RedisStore({
    ...address,
    logger: options.logger,
    // A password inside REDIS_URL takes precedence over this one.
    ...(env.REDIS_PASSWORD ? { password: env.REDIS_PASSWORD } : {}),
    failOpen,
  });
  return {
    kind: 'redis',
    store,
    where: where(address),
    failOpen,
    requireRedis,
  };
}

/**
 * Connects the Redis store now rather than on the first decision, and says how that went, as a line to log: with
 * Redis unreachable, the store answers by its fail mode until it answers, unless REQUIRE_REDIS refuses (an EnvError).
 */
export async function connectStore(
  env: EnvStore,
): Promise<{ readonly level: 'info' | 'warn'; readonly message: string }> {
  if (env.kind === 'memory') return { level: 'info', message: 'counting in memory, in this process alone' };
  const mode = env.failOpen ? 'open' : 'closed';
  try {
    await env.store.connect();
    return {
      level: 'info',
      message: `using Redis at ${env.where}; fails ${mode} whenever Redis is unreachable`,
    };
  } catch (error) {
    const why = `Redis at ${env.where} is unreachable (${(error as Error).message})`;
    if (env.requireRedis) throw new EnvError(`${why}; REQUIRE_REDIS=1, so not starting`);
    return { level: 'warn', message: `${why}; starting anyway, failing ${mode} until it answers` };
  }
}

type Address = Pick<RedisStoreOptions, 'rootNodes' | 'url' | 'host' | 'port'>;

/** REDIS_CLUSTER_NODES, else REDIS_URL, else REDIS_HOST and REDIS_PORT (default 127.0.0.1:6379). */
function redisAddress(env: Env): Address {
  if (env.REDIS_CLUSTER_NODES) return { rootNodes: env.REDIS_CLUSTER_NODES.split(',').map(clusterNode) };
  if (env.REDIS_URL) {
    redacted(env.REDIS_URL);
    return { url: env.REDIS_URL };
  }
  const port = envPort(env, 'REDIS_PORT', 6379);
  // 0 is "any free port" to a server, and no port at all to a client.
  if (port === 0) throw new EnvError('REDIS_PORT must be a port number from 1 to 65535 (received "0")');
  return { host: env.REDIS_HOST || '127.0.0.1', port };
}

/** One `host:port` of REDIS_CLUSTER_NODES, an IPv6 host in brackets: `[::1]:7000`. */
function clusterNode(entry: string): { host: string; port: number } {
  const match = /^\s*(?:\[([^\]\s]+)\]|([^:\s[\]]+)):(\d{1,5})\s*$/.exec(entry);
  const port = Number(match?.[3]);
  if (!match || port < 1 || port > 65_535)
    throw new EnvError(
      `REDIS_CLUSTER_NODES must be host:port,host:port,... (received ${JSON.stringify(entry)})`,
    );
  return { host: (match[1] ?? match[2]) as string, port };
}

function where(address: Address): string {
  if (address.rootNodes !== undefined)
    return `the cluster at ${address.rootNodes.map((node) => ('url' in node ? node.url : `${node.host}:${node.port}`)).join(',')}`;
  if (address.url !== undefined) return redacted(address.url);
  return `${address.host}:${address.port}`;
}

/** The URL with its password masked; an EnvError when it is no URL. */
function redacted(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EnvError('REDIS_URL is not a URL (expected redis://[[user]:password@]host[:port][/db])');
  }
  if (parsed.password !== '') parsed.password = '***';
  return parsed.href;
}

/** A port number; `fallback` when unset or empty. */
export function envPort(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(port <= 65_535))
    throw new EnvError(`${name} must be a port number from 0 to 65535 (received ${JSON.stringify(raw)})`);
  return port;
}

/** Only '1' and '0': a typo such as FAIL_OPEN=no must not silently pick a fail mode. */
export function envFlag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== '1' && raw !== '0')
    throw new EnvError(`${name} must be 1 or 0 (received ${JSON.stringify(raw)})`);
  return raw === '1';
}
