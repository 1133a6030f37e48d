// express-rate-limit's options resolved once: its defaults, its wire-up checks, and the store to count in.
import { isIPv6 } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { type Store as CountingStore, isStore } from '../../../stores/store.js';
import { ipKeyGenerator } from './ip-key-generator.js';
import { DEFAULT_WINDOW_MS, MemoryStore } from './memory-store.js';
import { counterOver } from './tollgate-counter.js';
import type {
  ClientRateLimitInfo,
  DraftHeadersVersion,
  LegacyStore,
  Logger,
  Options,
  RateLimitInfo,
  Store,
} from './types.js';
import { type Validations, validations } from './validations.js';

/** The options with every default filled in, the store ready to call, and the checks the requests run. */
export type Config = Omit<Options, 'store' | 'standardHeaders' | 'retryAfter' | 'validate'> & {
  readonly retryAfter?: Options['retryAfter'] | undefined;
  readonly store: Store;
  readonly standardHeaders: false | DraftHeadersVersion;
  readonly validations: Validations;
};

/** Given as express-rate-limit does: the arguments reversed, so the message comes before the error. */
const consoleLogger: Logger = {
  warn: (...args: unknown[]) => console.warn(...args.reverse()),
  error: (...args: unknown[]) => console.error(...args.reverse()),
};

/** Runs the wire-up checks on `passed` and fills in the defaults (an option given as undefined is left out). */
export function parseOptions(passed: Partial<Options>): Config {
  const given = Object.fromEntries(
    Object.entries(passed).filter(([, value]) => value !== undefined),
  ) as Partial<Options> & Record<string, unknown>;
  const logger = given.logger ?? consoleLogger;
  const checks = validations(given.validate ?? true, logger);
  checks.validationsConfig(checks.enabled);
  checks.knownOptions(passed);
  checks.draftPolliHeaders(given.draft_polli_ratelimit_headers);
  checks.onLimitReached(given.onLimitReached);
  if (given.ipv6Subnet !== undefined && typeof given.ipv6Subnet !== 'function')
    checks.ipv6Subnet(given.ipv6Subnet);
  checks.keyGeneratorIpFallback(given.keyGenerator);
  checks.ipv6SubnetOrKeyGenerator(given);
  const standardHeaders = given.standardHeaders === true ? 'draft-6' : (given.standardHeaders ?? false);
  const config: Config = {
    ...defaults(() => config, given),
    ...given,
    standardHeaders: standardHeaders as Config['standardHeaders'],
    store: countingStore(given.store, checks),
    validations: checks,
    logger,
  };
  const { store } = config;
  const optional = (method: unknown) => method === undefined || typeof method === 'function';
  if (
    typeof store.increment !== 'function' ||
    typeof store.decrement !== 'function' ||
    typeof store.resetKey !== 'function' ||
    !optional(store.resetAll) ||
    !optional(store.init)
  )
    throw new TypeError(
      'The store is not a Store: it needs increment, decrement and resetKey functions (and init, resetAll when set).',
    );
  return config;
}

/** express-rate-limit's defaults; those that read other options read them from the finished `config`. */
function defaults(config: () => Config, given: Partial<Options>) {
  return {
    windowMs: DEFAULT_WINDOW_MS,
    limit: given.max ?? 5,
    message: 'Too many requests, please try again later.',
    statusCode: 429,
    legacyHeaders: given.headers ?? true,
    identifier: (req: Request) => policyName(config(), req),
    requestPropertyName: 'rateLimit',
    skipFailedRequests: false,
    skipSuccessfulRequests: false,
    requestWasSuccessful: (_req: Request, res: Response) => res.statusCode < 400,
    skip: () => false,
    keyGenerator: (req: Request, res: Response) => addressKey(config(), req, res),
    ipv6Subnet: 56,
    handler: async (req: Request, res: Response, _next: NextFunction) => {
      const { statusCode, message } = config();
      res.status(statusCode);
      const body = typeof message === 'function' ? await message(req, res) : message;
      if (!res.writableEnded) res.send(body);
    },
    passOnStoreError: false,
    retryAfter: undefined,
  };
}

/** The default key: the address, checked (once) for the proxy traps, IPv6 grouped by `ipv6Subnet`. */
async function addressKey(config: Config, req: Request, res: Response): Promise<string> {
  const { validations: checks, ipv6Subnet } = config;
  checks.ip(req.ip);
  checks.trustProxy(req);
  checks.xForwardedForHeader(req);
  checks.forwardedHeader(req);
  const ip = req.ip as string;
  let subnet: number | false = 56;
  if (isIPv6(ip)) {
    subnet = typeof ipv6Subnet === 'function' ? await ipv6Subnet(req, res) : ipv6Subnet;
    if (typeof ipv6Subnet === 'function') checks.ipv6Subnet(subnet);
  }
  return ipKeyGenerator(ip, subnet);
}

/** Draft-8's default policy name: `<limit>-in-<window>`, the window in sec, min, hr(s) or day(s). */
function policyName(config: Config, req: Request): string {
  const { limit } = (req as unknown as Record<string, RateLimitInfo>)[
    config.requestPropertyName
  ] as RateLimitInfo;
  const seconds = config.windowMs / 1000;
  const [minutes, hours, days] = [seconds / 60, seconds / 3600, seconds / 86_400];
  const window =
    seconds < 60
      ? `${seconds}sec`
      : minutes < 60
        ? `${minutes}min`
        : hours < 24
          ? `${hours}hr${hours > 1 ? 's' : ''}`
          : `${days}day${days > 1 ? 's' : ''}`;
  return `${limit}-in-${window}`;
}

/**
 * The store to call: a limiter's own MemoryStore by default; a Tollgate store counting under the default prefix; a
 * callback store of express-rate-limit 5 behind promises; any other store as it is.
 */
function countingStore(store: Options['store'] | undefined, checks: Validations): Store {
  if (store === undefined) return new MemoryStore(checks);
  if (isStore(store)) return counterOver(store as unknown as CountingStore);
  const legacy = store as Partial<LegacyStore> & Partial<Store>;
  if (typeof legacy.incr !== 'function' || typeof legacy.increment === 'function') return store as Store;
  const { incr } = legacy as LegacyStore;
  return {
    increment: (key) =>
      new Promise<ClientRateLimitInfo>((resolve, reject) =>
        incr.call(legacy, key, (error, totalHits, resetTime) =>
          error ? reject(error) : resolve({ totalHits, resetTime }),
        ),
      ),
    decrement: async (key) => legacy.decrement?.(key),
    resetKey: async (key) => legacy.resetKey?.(key),
    resetAll: async () => legacy.resetAll?.(),
  };
}
