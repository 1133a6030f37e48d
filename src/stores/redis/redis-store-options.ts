// RedisStore's options: what each means, and each checked once at wire-up and resolved to the value the store runs on.
import { configError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import {
  knownKeys,
  loggerOption,
  nonNegativeInteger,
  oneOf,
  optionalClock,
  positiveInteger,
  timerMs,
} from '../../core/validate.js';
import { adaptClient, type RedisClientLike, type ScriptClient } from './client.js';
import { CONNECTION_OPTIONS, type ConnectionOptions, checkConnectionOptions } from './connection-options.js';
import { containedLogger } from './contained-logger.js';

export interface RedisStoreOptions extends ConnectionOptions {
  /** A client the application already owns (ioredis or node-redis); the store never closes it. */
  readonly client?: RedisClientLike;
  /** Key namespace. Default 'tg:': short, since every byte of a key is paid once per client tracked. */
  readonly keyPrefix?: string;
  /** Least TTL of a key. Default 60. */
  readonly minTtlSeconds?: number;
  /**
   * Greatest TTL of a key, for a data-retention rule. Default: none, each key lives until its state is at rest (and
   * a bucket that never refills has no TTL). A limiter whose policies need longer is refused at wire-up.
   */
  readonly maxTtlSeconds?: number;
  /** Added to each key's own time to rest. Default 60. */
  readonly ttlPaddingSeconds?: number;
  /** Allow (true) or reject (false) requests while Redis is unusable. Default true. */
  readonly failOpen?: boolean;
  /** Budget for one decision. Default 250 ms. */
  readonly commandTimeoutMs?: number;
  /** Budget for connecting. Default 1000 ms. */
  readonly connectTimeoutMs?: number;
  /** Least time between two connection attempts. Default 1000 ms. */
  readonly reconnectCooldownMs?: number;
  /** `Retry-After` given when failing closed. Default 1000 ms. */
  readonly degradedRetryAfterMs?: number;
  /** Consecutive failures after which Redis is no longer waited on, only probed. Default 3. */
  readonly breakerThreshold?: number;
  /**
   * What answers while Redis is down: `'none'` (default) is the fail mode; `'memory'` enforces the limit per
   * process, scaled by `fallbackShare`.
   */
  readonly fallback?: 'none' | 'memory';
  /** Share of each limit one process enforces in fallback; 1/N for N instances keeps the fleet near its limit. Default 1. */
  readonly fallbackShare?: number;
  /**
   * Most denials remembered locally, so a client flooding past its limit costs no round trip until its retry
   * time; 0 disables. Default 10,000.
   */
  readonly localDenyCache?: number;
  /**
   * At most one error log line per this window for failed Redis calls (and one for a failing memory fallback),
   * naming how the calls held back were answered. Default 5000 ms.
   */
  readonly logIntervalMs?: number;
  readonly logger?: Logger;
  /** Epoch ms to use instead of the server's TIME, also pacing the failure log; for tests only. */
  readonly clock?: () => number;
}

/** The options with their defaults applied, every one checked: nothing after wire-up needs to check again. */
export interface RedisStoreSettings {
  readonly keyPrefix: string;
  /** The script's TTL arguments: least, greatest (0: none) and padding, in ms. */
  readonly ttlMs: readonly number[];
  readonly maxTtlSeconds: number | undefined;
  readonly failOpen: boolean;
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly reconnectCooldownMs: number;
  readonly degradedRetryAfterMs: number;
  readonly breakerThreshold: number;
  readonly fallback: 'none' | 'memory';
  readonly fallbackShare: number;
  readonly localDenyCache: number;
  readonly logIntervalMs: number;
  /** The application's logger, its throws contained (see contained-logger.ts). */
  readonly logger: Logger;
  readonly clock: (() => number) | undefined;
  /** The application's own client, adapted; undefined when the store opens a connection of its own. */
  readonly client: ScriptClient | undefined;
  /**
   * Whether a batch's keys must share a cluster slot. Known at wire-up: the store's own connection is a cluster
   * exactly when `rootNodes` is given, and an application's client is one or not from the start.
   */
  readonly cluster: boolean;
}

const OPTIONS = [
  'client',
  ...CONNECTION_OPTIONS,
  'keyPrefix',
  'minTtlSeconds',
  'maxTtlSeconds',
  'ttlPaddingSeconds',
  'failOpen',
  'commandTimeoutMs',
  'connectTimeoutMs',
  'reconnectCooldownMs',
  'degradedRetryAfterMs',
  'logIntervalMs',
  'breakerThreshold',
  'localDenyCache',
  'fallback',
  'fallbackShare',
  'logger',
  'clock',
];

/** Throws a configuration error naming the first option that is wrong; otherwise every option, resolved. */
export function resolveOptions(options: RedisStoreOptions): RedisStoreSettings {
  knownKeys('RedisStore', options, OPTIONS);
  const keyPrefix = options.keyPrefix ?? 'tg:';
  if (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix)) {
    // A brace in the prefix would become every key's cluster hash tag and pile all buckets on one slot.
    throw configError('keyPrefix', 'must be a string without "{" or "}"', keyPrefix);
  }
  const min = nonNegativeInteger('minTtlSeconds', options.minTtlSeconds ?? 60);
  const max = options.maxTtlSeconds;
  if (max !== undefined && positiveInteger('maxTtlSeconds', max) < min)
    throw configError('minTtlSeconds', 'must not exceed `maxTtlSeconds`', min);
  const pad = nonNegativeInteger('ttlPaddingSeconds', options.ttlPaddingSeconds ?? 60);
  const failOpen = options.failOpen ?? true;
  if (typeof failOpen !== 'boolean') throw configError('failOpen', 'must be a boolean', failOpen);
  const commandTimeoutMs = timerMs('commandTimeoutMs', options.commandTimeoutMs ?? 250);
  const connectTimeoutMs = timerMs('connectTimeoutMs', options.connectTimeoutMs ?? 1000);
  const degradedRetryAfterMs = positiveInteger('degradedRetryAfterMs', options.degradedRetryAfterMs ?? 1000);
  const logIntervalMs = nonNegativeInteger('logIntervalMs', options.logIntervalMs ?? 5000);
  // Contained once here, so every log call of the store is safe from a logger that throws.
  const logger = containedLogger(loggerOption(options.logger, console));
  const fallback = oneOf('fallback', options.fallback ?? 'none', ['none', 'memory'] as const);
  const fallbackShare = options.fallbackShare ?? 1;
  if (typeof fallbackShare !== 'number' || !(fallbackShare > 0 && fallbackShare <= 1))
    throw configError('fallbackShare', 'must be a number in (0, 1]', fallbackShare);
  const clock = optionalClock(options.clock);
  const localDenyCache = nonNegativeInteger('localDenyCache', options.localDenyCache ?? 10_000);
  const breakerThreshold = positiveInteger('breakerThreshold', options.breakerThreshold ?? 3);
  const reconnectCooldownMs = timerMs('reconnectCooldownMs', options.reconnectCooldownMs ?? 1000);

  checkConnectionOptions(options);
  if (options.client !== undefined) {
    for (const own of CONNECTION_OPTIONS) {
      if (options[own] !== undefined)
        throw configError(own, 'cannot be combined with `client` (configure the client)');
    }
  }
  const client = options.client === undefined ? undefined : adaptClient(options.client);
  return {
    keyPrefix,
    // 0 tells the script there is no greatest TTL.
    ttlMs: [min * 1000, (max ?? 0) * 1000, pad * 1000],
    maxTtlSeconds: max,
    failOpen,
    commandTimeoutMs,
    connectTimeoutMs,
    reconnectCooldownMs,
    degradedRetryAfterMs,
    breakerThreshold,
    fallback,
    fallbackShare,
    localDenyCache,
    logIntervalMs,
    logger,
    clock,
    client,
    cluster: options.rootNodes !== undefined || client?.isCluster === true,
  };
}
