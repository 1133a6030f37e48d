// express-rate-limit's options, read with its meaning: which keys mean that style, and what each becomes here.
import { isIPv6 } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { parseDuration } from '../duration.js';
import { configError } from '../errors.js';
import type { GateOptions } from '../gate-options.js';
import { type HeaderWriter, headerWriter } from '../headers.js';
import { addressIdentity } from '../identity/address-identity.js';
import type { Identity } from '../identity/identity.js';
import { createLimiter } from '../limiter.js';
import { fixedWindow } from '../policies/fixed-window.js';
import { policyName } from '../policies/policy.js';
import { MemoryStore } from '../stores/memory-store.js';
import type { Store } from '../stores/store.js';
import {
  knownKeys,
  MAX_SPAN,
  nonNegativeInteger,
  oneOf,
  optionalFunction,
  positiveInteger,
} from '../validate.js';
import {
  type ExpressRateLimitCompatOptions,
  type ExpressRateLimitKey,
  type ExpressRateLimitResolvedOptions,
  VALIDATIONS,
  type ValueOrFunction,
} from './express-rate-limit-types.js';

/** The options translated, once at wire-up, into what the express-rate-limit-style middleware runs. */
export interface ExpressRateLimitStyle {
  /** The gate counts every hit in a fixed window, denied ones too; the middleware compares them with the limit. */
  readonly gate: GateOptions<Request, Response>;
  readonly windowMs: number;
  readonly limit: (req: Request, res: Response) => number | Promise<number>;
  /** The policy's name, given the request's limit: only draft-8 writes it. */
  readonly name: ((req: Request, res: Response, limit: number) => string | Promise<string>) | undefined;
  readonly headers: HeaderWriter | undefined;
  readonly retryAfter: ((req: Request, res: Response) => number | Promise<number>) | undefined;
  readonly property: string;
  readonly handler: NonNullable<ExpressRateLimitCompatOptions['handler']>;
  readonly options: ExpressRateLimitResolvedOptions;
  readonly warnBehindProxy: boolean;
}

/** Keys only express-rate-limit has: any of them means its style. */
const ITS_OWN: readonly ExpressRateLimitKey[] = [
  'windowMs',
  'limit',
  'max',
  'standardHeaders',
  'keyGenerator',
  'ipv6Subnet',
  'requestPropertyName',
  'passOnStoreError',
  'retryAfter',
  'validate',
];
/** Keys of both, read with express-rate-limit's meaning in its style. */
const SHARED = [
  'message',
  'statusCode',
  'handler',
  'legacyHeaders',
  'identifier',
  'skip',
  'skipFailedRequests',
  'skipSuccessfulRequests',
  'requestWasSuccessful',
  'store',
  'logger',
  'scope',
];
/** Its keys (and its companions') that Tollgate cannot honour, and what to do instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  draft_polli_ratelimit_headers: "was express-rate-limit 6's: use `standardHeaders: 'draft-6'`",
  onLimitReached: 'was removed in express-rate-limit 7: do its work in `handler`',
  delayAfter: "is express-slow-down's: Tollgate answers or rejects, it does not slow responses down",
  delayMs: "is express-slow-down's: Tollgate answers or rejects, it does not slow responses down",
  maxDelayMs: "is express-slow-down's: Tollgate answers or rejects, it does not slow responses down",
};
/** Tollgate's own options with a twin of a different name in express-rate-limit's style. */
const TWINS: Readonly<Record<string, string>> = {
  headers:
    "is `legacyHeaders` (the X-RateLimit fields) and `standardHeaders` (the draft's) in express-rate-limit's style",
  failOpen: "is `passOnStoreError` in express-rate-limit's style",
};
/** Tollgate's own options without a place in express-rate-limit's style. */
const TOLLGATE_ONLY = [
  'requestsPerMinute',
  'capacity',
  'policy',
  'limiter',
  'cost',
  'unidentified',
  'shadow',
  'blockMs',
  'tiers',
  'onDecision',
  'legacyReset',
];
const DEFAULT_MESSAGE = 'Too many requests, please try again later.';
/** Stores counting for express-rate-limit-style limiters without a `scope`: a second one would share their counts. */
const unscoped = new WeakSet<Store>();

/** The key that makes these options express-rate-limit's, or undefined when they are Tollgate's own. */
export function expressRateLimitKey(options: unknown): string | undefined {
  if (typeof options !== 'object' || options === null) return undefined;
  return Object.keys(options).find(
    (key) => (ITS_OWN as readonly string[]).includes(key) || Object.hasOwn(UNSUPPORTED, key),
  );
}

/** Checks the options (`trigger` is the key that made them express-rate-limit's) and translates them. */
export function expressRateLimitStyle(
  options: ExpressRateLimitCompatOptions,
  trigger: string,
): ExpressRateLimitStyle {
  refuseForeignKeys(options, trigger);
  const windowMs = parseDuration('windowMs', options.windowMs ?? 60_000);
  const limitOption = options.limit === undefined && options.max !== undefined ? 'max' : 'limit';
  const limit = perRequest(limitOption, options.limit ?? options.max ?? 5, (value) =>
    nonNegativeInteger(limitOption, value),
  );
  const statusCode = positiveInteger('statusCode', options.statusCode ?? 429);
  if (statusCode < 400 || statusCode > 599)
    throw configError('statusCode', 'must be an HTTP error status (400-599)', statusCode);
  const message = options.message === undefined ? DEFAULT_MESSAGE : options.message;
  const legacyHeaders = options.legacyHeaders ?? true;
  if (typeof legacyHeaders !== 'boolean')
    throw configError('legacyHeaders', 'must be a boolean', legacyHeaders);
  const standard = oneOf('standardHeaders', options.standardHeaders ?? false, [
    false,
    true,
    'draft-6',
    'draft-7',
    'draft-8',
  ] as const);
  const standardHeaders = standard === true ? 'draft-6' : standard;
  const property = options.requestPropertyName ?? 'rateLimit';
  if (typeof property !== 'string' || property === '')
    throw configError('requestPropertyName', 'must be a non-empty string', property);
  const passOnStoreError = options.passOnStoreError ?? false;
  if (typeof passOnStoreError !== 'boolean')
    throw configError('passOnStoreError', 'must be a boolean', passOnStoreError);
  const handler = optionalFunction('handler', options.handler) ?? defaultHandler;
  const resolved: ExpressRateLimitResolvedOptions = {
    ...options,
    windowMs,
    limit: options.limit ?? options.max ?? 5,
    message,
    statusCode,
    legacyHeaders,
    standardHeaders,
    requestPropertyName: property,
    skipFailedRequests: options.skipFailedRequests ?? false,
    skipSuccessfulRequests: options.skipSuccessfulRequests ?? false,
    passOnStoreError,
    handler,
  };
  return {
    gate: gateOptions(options, windowMs, passOnStoreError),
    windowMs,
    limit: typeof limit === 'number' ? () => limit : limit,
    name: standardHeaders === 'draft-8' ? draft8Name(options.identifier, windowMs) : undefined,
    headers: headerWriter(standardHeaders, legacyHeaders && 'epoch-seconds'),
    retryAfter: retryAfter(options.retryAfter),
    property,
    handler,
    options: resolved,
    warnBehindProxy: forwardedForChecked(options.validate),
  };
}

/** Tollgate's own options, its style's retired ones, and typos, each refused with what to write instead. */
function refuseForeignKeys(options: ExpressRateLimitCompatOptions, trigger: string): void {
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(UNSUPPORTED, key)) throw configError(key, UNSUPPORTED[key] as string);
    if (Object.hasOwn(TWINS, key)) throw configError(key, TWINS[key] as string);
    if (TOLLGATE_ONLY.includes(key))
      throw configError(
        key,
        `is Tollgate's own, and \`${trigger}\` is express-rate-limit's: write the options in one style or the other (docs/migrating.md)`,
      );
  }
  knownKeys(`rateLimit in express-rate-limit's style (given \`${trigger}\`)`, options, [
    ...ITS_OWN,
    ...SHARED,
  ]);
}

/** What the gate runs: a counter of every hit per window, the key, skip and refunds as express-rate-limit has them. */
function gateOptions(
  options: ExpressRateLimitCompatOptions,
  windowMs: number,
  passOnStoreError: boolean,
): GateOptions<Request, Response> {
  const keyGenerator = optionalFunction('keyGenerator', options.keyGenerator);
  const skip = optionalFunction('skip', options.skip);
  if (keyGenerator !== undefined && options.ipv6Subnet !== undefined)
    throw configError(
      'ipv6Subnet',
      "groups the default key only: with `keyGenerator`, group inside it (addressIdentity(req.ip, { ipv6Prefix: 56 }) from 'tollgate')",
    );
  // A limit the counter never reaches: denials are counted too, and the middleware compares with the real limit.
  const counter = fixedWindow({ limit: Math.floor((MAX_SPAN - 1) / windowMs), windowMs, name: 'hits' });
  const { skipFailedRequests, skipSuccessfulRequests, requestWasSuccessful, logger, scope } = options;
  return {
    limiter: createLimiter({
      policy: counter,
      store: counterStore(options.store, scope),
      failOpen: passOnStoreError,
      ...(scope === undefined ? {} : { scope }),
    }),
    // Express sets req.res; express-rate-limit's callbacks take the response beside the request.
    identifier:
      keyGenerator === undefined
        ? clientAddress(options.ipv6Subnet ?? 56)
        : (req) => keyGenerator(req, req.res as Response),
    headers: false,
    ...(skip === undefined ? {} : { skip: (req: Request) => skip(req, req.res as Response) }),
    ...(logger === undefined ? {} : { logger }),
    ...(skipFailedRequests === undefined ? {} : { skipFailedRequests }),
    ...(skipSuccessfulRequests === undefined ? {} : { skipSuccessfulRequests }),
    ...(requestWasSuccessful === undefined ? {} : { requestWasSuccessful }),
  };
}

/** The store to count in: a Tollgate one, or a MemoryStore of the limiter's own, as each erl limiter has. */
function counterStore(store: unknown, scope: string | undefined): Store {
  if (store === undefined) return new MemoryStore();
  const foreign = store as { increment?: unknown; incr?: unknown } | null;
  if (typeof foreign?.increment === 'function' || typeof foreign?.incr === 'function')
    throw configError(
      'store',
      "is an express-rate-limit store (increment/decrement), and Tollgate counts in its own: use new MemoryStore() from 'tollgate', or new RedisStore({ client }) from 'tollgate/redis' with the Redis client that store was given",
    );
  if (scope === undefined && typeof store === 'object' && store !== null) {
    if (unscoped.has(store as Store))
      throw configError(
        'scope',
        'is needed: another limiter in this style counts in this store without one, so the two would share their counts (give each limiter its own `scope`)',
      );
    unscoped.add(store as Store);
  }
  return store as Store;
}

type IPv6Subnet = ExpressRateLimitCompatOptions['ipv6Subnet'];

/** express-rate-limit's default key: the address, IPv4-mapped IPv6 as IPv4, other IPv6 by its network. */
function clientAddress(subnet: NonNullable<IPv6Subnet>): (req: Request) => Identity | Promise<Identity> {
  // As express-rate-limit does, a subnet function is asked only for an IPv6 client.
  if (typeof subnet === 'function')
    return async (req) =>
      grouped(req.ip, isIPv6(req.ip ?? '') && checkedSubnet(await subnet(req, req.res as Response)));
  const bits = checkedSubnet(subnet);
  return (req) => grouped(req.ip, bits);
}

/**
 * express-rate-limit's helper for a `keyGenerator` that falls back to the address: IPv4 as is, IPv6 as its
 * /`ipv6Subnet` network in CIDR notation (false: the address itself), so one subscriber's addresses share a key.
 *
 * @example
 * keyGenerator: (req) => req.get('x-user-id') ?? ipKeyGenerator(req.ip ?? '', 56)
 */
export function ipKeyGenerator(ip: string, ipv6Subnet: number | false = 56): string {
  return grouped(ip, checkedSubnet(ipv6Subnet)) || ip;
}

function checkedSubnet(bits: unknown): number | false {
  if (bits === false || (Number.isInteger(bits) && (bits as number) >= 1 && (bits as number) <= 128))
    return bits as number | false;
  throw configError('ipv6Subnet', 'must be an integer from 1 to 128, or false', bits);
}

function grouped(ip: string | undefined, bits: number | false): Identity {
  if (bits !== false) return addressIdentity(ip, { ipv6Prefix: bits });
  // Each IPv6 address alone, but an IPv4 client seen through a dual-stack socket still as IPv4.
  const address = addressIdentity(ip, { ipv6Prefix: 128 });
  return address?.endsWith('/128') ? ip : address;
}

/** A number option that may be a function of the request, checked once when static. */
function perRequest(
  option: string,
  value: unknown,
  check: (value: unknown) => number,
): number | ((req: Request, res: Response) => number | Promise<number>) {
  if (typeof value === 'function') return value as (req: Request, res: Response) => number | Promise<number>;
  if (typeof value === 'number') return check(value);
  throw configError(option, 'must be a number or a function of (req, res) returning one', value);
}

/** express-rate-limit's name of a policy: `<limit>-in-<window>`, the window in sec, min, hr(s) or day(s). */
function draft8Name(
  identifier: ValueOrFunction<string> | undefined,
  windowMs: number,
): NonNullable<ExpressRateLimitStyle['name']> {
  if (typeof identifier === 'function') return identifier;
  if (identifier !== undefined) {
    // Checked as the policy name it becomes: the header writes it unescaped.
    try {
      policyName({ name: identifier }, 'fixed-window');
    } catch {
      throw configError(
        'identifier',
        'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"',
        identifier,
      );
    }
    return () => identifier;
  }
  const seconds = windowMs / 1000;
  const [minutes, hours, days] = [seconds / 60, seconds / 3600, seconds / 86_400];
  const window =
    seconds < 60
      ? `${seconds}sec`
      : minutes < 60
        ? `${minutes}min`
        : hours < 24
          ? `${hours}hr${hours > 1 ? 's' : ''}`
          : `${days}day${days > 1 ? 's' : ''}`;
  return (_req, _res, limit) => `${limit}-in-${window}`;
}

function retryAfter(value: ValueOrFunction<number> | undefined): ExpressRateLimitStyle['retryAfter'] {
  if (value === undefined) return undefined;
  const seconds = perRequest('retryAfter', value, (n) => nonNegativeInteger('retryAfter', n));
  return typeof seconds === 'number' ? () => seconds : seconds;
}

/** Whether to warn of X-Forwarded-For behind an untrusted proxy: erl's `validate` names that check. */
function forwardedForChecked(validate: ExpressRateLimitCompatOptions['validate']): boolean {
  if (validate === undefined || typeof validate === 'boolean') return validate ?? true;
  if (typeof validate !== 'object' || validate === null)
    throw configError('validate', 'must be a boolean or an object of validation names', validate);
  knownKeys("`validate` (express-rate-limit's validation names)", validate, VALIDATIONS);
  for (const [name, on] of Object.entries(validate))
    if (typeof on !== 'boolean') throw configError(`validate.${name}`, 'must be a boolean', on);
  return validate.xForwardedForHeader ?? validate.default ?? true;
}

/** express-rate-limit's answer: the status, then the message (a function's result) through res.send. */
async function defaultHandler(
  req: Request,
  res: Response,
  _next: NextFunction,
  options: ExpressRateLimitResolvedOptions,
): Promise<void> {
  res.status(options.statusCode);
  const { message } = options;
  const body = typeof message === 'function' ? await message(req, res) : message;
  if (!res.writableEnded) res.send(body);
}
