// express-rate-limit's checks of a likely mistake: each logged once per limiter with its code, none stops the app.
import { isIP } from 'node:net';
import type { Request } from 'express';
import { isStore } from '../../../stores/store.js';
import { PERMISSIVE_TRUST_PROXY, permissiveTrustProxy } from '../proxy-warning.js';
import type { EnabledValidations, Logger, Options, Store, ValidationName } from './types.js';

/**
 * A check that failed: the code (`ERR_ERL_...`, as express-rate-limit has them) and the page that explains it;
 * `help: false` for a finding of this library's own, whose code is explained with Tollgate's errors.
 */
export class ValidationError extends Error {
  readonly code: string;
  readonly help: string | undefined;

  constructor(
    code: string,
    message: string,
    help: string | false = `https://express-rate-limit.github.io/${code}/`,
  ) {
    super(help === false ? message : `${message} See ${help} for more information.`);
    this.name = new.target.name;
    this.code = code;
    this.help = help === false ? undefined : help;
  }
}

/** A behaviour that changed between versions: logged as a warning, not an error. */
class ChangeWarning extends ValidationError {}

const DRAFTS = ['draft-6', 'draft-7', 'draft-8'];
const MAX_TIMER = 2 ** 31 - 1;
/** Every option name express-rate-limit 8 knows, and the retired ones a more precise check reports. */
const KNOWN_OPTIONS = [
  ...['windowMs', 'limit', 'message', 'statusCode', 'legacyHeaders', 'standardHeaders', 'identifier'],
  ...['retryAfter', 'requestPropertyName', 'skipFailedRequests', 'skipSuccessfulRequests', 'keyGenerator'],
  ...['ipv6Subnet', 'handler', 'skip', 'requestWasSuccessful', 'store', 'validate', 'headers', 'max'],
  ...['passOnStoreError', 'logger', 'draft_polli_ratelimit_headers', 'delayAfter', 'delayMs', 'maxDelayMs'],
];
/** Store objects some limiter already counts in, across the process. */
const usedStores = new WeakSet<object>();
/** Per request, the keys incremented so far, per store (or per store class, for stores sharing their keys). */
const countedKeys = new WeakMap<object, Map<unknown, string[]>>();

/** The checks, in express-rate-limit's order (the list `validate` accepts is named from it). Each throws its finding. */
const CHECKS = {
  ip(ip: string | undefined): void {
    if (ip === undefined)
      fail(
        'ERR_ERL_UNDEFINED_IP_ADDRESS',
        "'request.ip' is undefined: a misconfiguration, or a connection closed before the request was handled.",
      );
    if (!isIP(ip))
      fail(
        'ERR_ERL_INVALID_IP_ADDRESS',
        `'request.ip' (${ip}) is not an IP address: give the limiter a 'keyGenerator' of your own.`,
      );
  },
  trustProxy(request: Request): void {
    if (permissiveTrustProxy(request)) fail('ERR_ERL_PERMISSIVE_TRUST_PROXY', PERMISSIVE_TRUST_PROXY);
  },
  xForwardedForHeader(request: Request): void {
    if (request.headers['x-forwarded-for'] && request.app.get('trust proxy') === false)
      fail(
        'ERR_ERL_UNEXPECTED_X_FORWARDED_FOR',
        "The 'X-Forwarded-For' header is set while Express's 'trust proxy' setting is false (its default), so " +
          'every client behind the proxy is seen as one and shares one limit.',
      );
  },
  forwardedHeader(request: Request): void {
    if (request.headers.forwarded && request.ip === request.socket?.remoteAddress)
      fail(
        'ERR_ERL_FORWARDED_HEADER',
        "The 'Forwarded' header (the standard X-Forwarded-For) is set but Express ignores it: read it in a " +
          "'keyGenerator' of your own to key clients by it.",
      );
  },
  positiveHits(hits: unknown): void {
    if (typeof hits !== 'number' || hits < 1 || hits !== Math.round(hits))
      fail(
        'ERR_ERL_INVALID_HITS',
        `The store gave totalHits ${hits}, where a positive integer was expected.`,
      );
  },
  unsharedStore(store: object): void {
    if (usedStores.has(store)) {
      const unique = (store as Store).localKeys ? '' : ' (with a unique prefix)';
      const own = isStore(store)
        ? "give each its own counter on it: store: tollgateStore(store, { prefix: 'login' }) from 'tollgate/express-rate-limit'."
        : `create a new ${store.constructor.name}${unique} for each limiter.`;
      fail('ERR_ERL_STORE_REUSE', `One Store instance is used by several rate limiters: ${own}`);
    }
    usedStores.add(store);
  },
  singleCount(request: Request, store: Store, key: string): void {
    let stores = countedKeys.get(request);
    if (stores === undefined) {
      stores = new Map();
      countedKeys.set(request, stores);
    }
    const owner = store.localKeys ? store : store.constructor.name;
    const keys = stores.get(owner) ?? [];
    stores.set(owner, keys);
    const prefixed = `${store.prefix ?? ''}${key}`;
    if (keys.includes(prefixed))
      fail('ERR_ERL_DOUBLE_COUNT', `The hit count of ${key} was incremented more than once for one request.`);
    keys.push(prefixed);
  },
  limit(limit: unknown): void {
    if (limit === 0)
      change(
        'WRN_ERL_MAX_ZERO',
        'A limit (or max) of 0 turned rate limiting off in express-rate-limit 6 and older; since 7 it blocks every request.',
      );
  },
  draftPolliHeaders(given: unknown): void {
    if (given)
      change(
        'WRN_ERL_DEPRECATED_DRAFT_POLLI_HEADERS',
        "The draft_polli_ratelimit_headers option was removed in express-rate-limit 7: set standardHeaders: 'draft-6' instead.",
      );
  },
  onLimitReached(given: unknown): void {
    if (given)
      change(
        'WRN_ERL_DEPRECATED_ON_LIMIT_REACHED',
        'The onLimitReached option was removed in express-rate-limit 7: do its work in handler.',
      );
  },
  headersDraftVersion(version: unknown): void {
    if (typeof version !== 'string' || !DRAFTS.includes(version))
      fail(
        'ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION',
        `standardHeaders: the supported versions of the IETF draft are ${DRAFTS.join(', ')}.`,
      );
  },
  headersResetTime(resetTime: Date | undefined): void {
    if (!resetTime)
      fail(
        'ERR_ERL_HEADERS_NO_RESET',
        "standardHeaders 'draft-7' and 'draft-8' need a 'resetTime', which the store did not give: 'windowMs' is " +
          'used instead, which may make clients wait longer than they need to.',
      );
  },
  knownOptions(passed: object | undefined): void {
    if (!passed) return;
    for (const key of Object.keys(passed))
      if (!KNOWN_OPTIONS.includes(key))
        fail('ERR_ERL_UNKNOWN_OPTION', `Unexpected configuration option: ${key}`);
  },
  validationsConfig(enabled: Readonly<Record<string, boolean>>): void {
    const supported = [...Object.keys(CHECKS), 'default'];
    for (const key of Object.keys(enabled))
      if (!supported.includes(key))
        fail(
          'ERR_ERL_UNKNOWN_VALIDATION',
          `options.validate.${key} is not a known check. The known ones are: ${supported.join(', ')}.`,
        );
  },
  creationStack(store: Store): void {
    const { stack } = new Error('creation stack check (options.validate.creationStack=false turns it off)');
    // Express 4's and 5's frame for a handler running: the limiter is being created per request.
    if (!stack?.includes('Layer.handle [as handle_request]') && !stack?.includes('Layer.handleRequest'))
      return;
    const should = store.localKeys ? 'should' : 'should *usually*';
    fail(
      'ERR_ERL_CREATED_IN_REQUEST_HANDLER',
      `A rate limiter ${should} be created once, when the app starts, not while answering a request.`,
    );
  },
  ipv6Subnet(ipv6Subnet: unknown): void {
    if (ipv6Subnet === false) return;
    if (!Number.isInteger(ipv6Subnet) || (ipv6Subnet as number) < 32 || (ipv6Subnet as number) > 64)
      fail(
        'ERR_ERL_IPV6_SUBNET',
        `Unexpected ipv6Subnet value: ${ipv6Subnet}. An integer from 32 to 64 was expected (usually 48 to 64).`,
      );
  },
  ipv6SubnetOrKeyGenerator(options: Partial<Options>): void {
    if (options.ipv6Subnet !== undefined && options.keyGenerator)
      fail(
        'ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR',
        "Incompatible options: 'ipv6Subnet' groups the default key only, and a 'keyGenerator' is set.",
      );
  },
  keyGeneratorIpFallback(keyGenerator: unknown): void {
    if (typeof keyGenerator !== 'function') return;
    const source = keyGenerator.toString();
    if ((source.includes('req.ip') || source.includes('request.ip')) && !source.includes('ipKeyGenerator'))
      fail(
        'ERR_ERL_KEY_GEN_IPV6',
        'The keyGenerator seems to use the request IP without the ipKeyGenerator helper: each IPv6 client ' +
          'could then use many addresses, each with a limit of its own.',
      );
  },
  windowMs(windowMs: unknown): void {
    if (typeof windowMs !== 'number' || Number.isNaN(windowMs) || windowMs < 1 || windowMs > MAX_TIMER) {
      const type = typeof windowMs === 'number' ? '' : ` (${typeof windowMs})`;
      fail(
        'ERR_ERL_WINDOW_MS',
        `Invalid windowMs value: ${windowMs}${type}: the default MemoryStore needs a number from 1 to ${MAX_TIMER}.`,
      );
    }
  },
} satisfies Record<ValidationName, (...args: never[]) => void>;

type Checks = typeof CHECKS;

/** The checks as a limiter runs them: each at most once, when enabled, its finding logged rather than thrown. */
export type Validations = { readonly enabled: Record<string, boolean> } & {
  readonly [K in keyof Checks]: (...args: Parameters<Checks[K]>) => void;
} & {
  /** A finding of this library's own (the shared-counter warning), switched with `unsharedStore`. */
  readonly report: (error: ValidationError) => void;
};

/** The limiter's checks as `validate` sets them (a boolean for all, or by name), reporting through `logger`. */
export function validations(setting: boolean | EnabledValidations, logger: Logger): Validations {
  if (typeof logger !== 'object' || typeof logger?.error !== 'function' || typeof logger.warn !== 'function')
    throw new TypeError('The logger option must be an object with error() and warn() functions.');
  const enabled: Record<string, boolean> =
    typeof setting === 'boolean' ? { default: setting } : { default: true, ...setting };
  const log = (error: unknown) => (error instanceof ChangeWarning ? logger.warn(error) : logger.error(error));
  const wrapped: Record<string, unknown> = { enabled };
  for (const [name, check] of Object.entries(CHECKS))
    wrapped[name] = (...args: unknown[]) => {
      if (!(enabled[name] ?? enabled.default)) return;
      // Once per limiter, whatever the outcome: a check that passed on the first request is not run again.
      enabled[name] = false;
      try {
        (check as (...given: unknown[]) => void)(...args);
      } catch (error) {
        log(error);
      }
    };
  const sharing = enabled.unsharedStore ?? enabled.default;
  wrapped.report = (error: ValidationError) => {
    if (sharing) log(error);
  };
  return wrapped as Validations;
}

function fail(code: string, message: string): never {
  throw new ValidationError(code, message);
}

function change(code: string, message: string): never {
  throw new ChangeWarning(code, message);
}
