// express-rate-limit's options, read with its meaning: which keys mean that style, and what each becomes here.
import type { NextFunction, Request, Response } from 'express';
import { parseDuration } from '../../../core/duration.js';
import { configError } from '../../../core/errors.js';
import {
  errorStatus,
  knownKeys,
  MAX_SPAN,
  nonNegativeInteger,
  oneOf,
  optionalFunction,
} from '../../../core/validate.js';
import { type HeaderWriter, headerWriter } from '../../../decision/headers.js';
import type { GateOptions } from '../../../gate/options.js';
import { createLimiter } from '../../../limiter/limiter.js';
import { fixedWindow } from '../../../policies/fixed-window.js';
import { policyName } from '../../../policies/policy.js';
import { MemoryStore } from '../../../stores/memory/memory-store.js';
import type { Store } from '../../../stores/store.js';
import { clientAddress } from './address.js';
import { refuseForeignKeys } from './keys.js';
import {
  type ExpressRateLimitCompatOptions,
  type ExpressRateLimitResolvedOptions,
  VALIDATIONS,
  type ValueOrFunction,
} from './types.js';

/** The options translated, once at wire-up, into what the express-rate-limit-style middleware runs. */
export interface ExpressRateLimitStyle {
  /** The gate counts every hit in a fixed window, denied ones too; the middleware compares them with the limit. */
  readonly gate: GateOptions<Request, Response>;
  readonly windowMs: number;
  /** The most hits the counter holds per window: a `limit` above it could never be enforced. */
  readonly maxLimit: number;
  readonly limit: (req: Request, res: Response) => number | Promise<number>;
  /** The policy's name, given the request's limit: only draft-8 writes it. */
  readonly name: ((req: Request, res: Response, limit: number) => string | Promise<string>) | undefined;
  readonly headers: HeaderWriter | undefined;
  readonly retryAfter: ((req: Request, res: Response) => number | Promise<number>) | undefined;
  readonly property: string;
  readonly handler: NonNullable<ExpressRateLimitCompatOptions['handler']>;
  readonly options: ExpressRateLimitResolvedOptions;
  readonly warnBehindProxy: boolean;
  readonly onDecision: ExpressRateLimitCompatOptions['onDecision'];
}

const DEFAULT_MESSAGE = 'Too many requests, please try again later.';
/** Stores counting for express-rate-limit-style limiters without a `scope`: a second one would share their counts. */
const unscoped = new WeakSet<Store>();

/** Checks the options (`trigger` is the key that made them express-rate-limit's) and translates them. */
export function expressRateLimitStyle(
  options: ExpressRateLimitCompatOptions,
  trigger: string,
): ExpressRateLimitStyle {
  refuseForeignKeys(options, trigger);
  const windowMs = parseDuration('windowMs', options.windowMs ?? 60_000);
  // The counter's quota times its window stays below 2^51 (exact in both engines); it must hold a hit at least.
  const maxLimit = Math.floor((MAX_SPAN - 1) / windowMs);
  if (maxLimit < 1) throw configError('windowMs', 'must be below 2^51 ms', options.windowMs);
  const { given, limit } = requestLimit(options, maxLimit);
  const resolved = resolvedOptions(options, windowMs, given);
  const { standardHeaders, legacyHeaders, passOnStoreError, handler } = resolved;
  return {
    gate: gateOptions(options, windowMs, maxLimit, passOnStoreError),
    windowMs,
    maxLimit,
    limit: typeof limit === 'number' ? () => limit : limit,
    name: standardHeaders === 'draft-8' ? draft8Name(options.identifier, windowMs) : undefined,
    headers: headerWriter(standardHeaders, legacyHeaders && 'epoch-seconds'),
    retryAfter: retryAfter(options.retryAfter),
    property: resolved.requestPropertyName,
    handler,
    options: resolved,
    warnBehindProxy: forwardedForChecked(options.validate),
    onDecision: optionalFunction('onDecision', options.onDecision),
  };
}

/** `limit` (or `max`, its older name) as given, and as the middleware reads it: a number checked once, or a function. */
function requestLimit(
  options: ExpressRateLimitCompatOptions,
  maxLimit: number,
): {
  given: ValueOrFunction<number>;
  limit: number | ((req: Request, res: Response) => number | Promise<number>);
} {
  const limitOption = options.limit === undefined && options.max !== undefined ? 'max' : 'limit';
  const given = options.limit ?? options.max ?? 5;
  const limit = perRequest(limitOption, given, (value) => {
    const n = nonNegativeInteger(limitOption, value);
    if (n > maxLimit)
      throw configError(
        limitOption,
        `must be at most ${maxLimit} with this \`windowMs\` (their product stays below 2^51)`,
        n,
      );
    return n;
  });
  return { given, limit };
}

/** The options as express-rate-limit hands them to a handler: each checked, and given its default. */
function resolvedOptions(
  options: ExpressRateLimitCompatOptions,
  windowMs: number,
  limit: ValueOrFunction<number>,
): ExpressRateLimitResolvedOptions & Pick<ExpressRateLimitStyle, 'handler'> {
  const statusCode = errorStatus('statusCode', options.statusCode ?? 429);
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
  const property = options.requestPropertyName ?? 'rateLimit';
  if (typeof property !== 'string' || property === '')
    throw configError('requestPropertyName', 'must be a non-empty string', property);
  const passOnStoreError = options.passOnStoreError ?? false;
  if (typeof passOnStoreError !== 'boolean')
    throw configError('passOnStoreError', 'must be a boolean', passOnStoreError);
  return {
    ...options,
    windowMs,
    limit,
    message,
    statusCode,
    legacyHeaders,
    standardHeaders: standard === true ? 'draft-6' : standard,
    requestPropertyName: property,
    skipFailedRequests: options.skipFailedRequests ?? false,
    skipSuccessfulRequests: options.skipSuccessfulRequests ?? false,
    passOnStoreError,
    handler: optionalFunction('handler', options.handler) ?? defaultHandler,
  };
}

/** What the gate runs: a counter of every hit per window, the key, skip and refunds as express-rate-limit has them. */
function gateOptions(
  options: ExpressRateLimitCompatOptions,
  windowMs: number,
  maxLimit: number,
  passOnStoreError: boolean,
): GateOptions<Request, Response> {
  const keyGenerator = optionalFunction('keyGenerator', options.keyGenerator);
  const skip = optionalFunction('skip', options.skip);
  if (keyGenerator !== undefined && options.ipv6Subnet !== undefined)
    throw configError(
      'ipv6Subnet',
      "groups the default key only: with `keyGenerator`, group inside it (`ipKeyGenerator(req.ip, subnet)` from 'tollgate/express')",
    );
  // As high a quota as the window allows, denials counted too: the middleware compares with the request's limit,
  // which is never above it, and a counter that is full denies whatever that limit.
  const counter = fixedWindow({ limit: maxLimit, windowMs, name: 'hits' });
  const { skipFailedRequests, skipSuccessfulRequests, requestWasSuccessful, logger, scope } = options;
  const store = counterStore(options.store, scope);
  const limiter = createLimiter({
    policy: counter,
    store,
    failOpen: passOnStoreError,
    ...(scope === undefined ? {} : { scope }),
  });
  // Claimed once the limiter exists: a limiter refused for another reason leaves the store free.
  if (options.store !== undefined && scope === undefined) unscoped.add(store);
  return {
    limiter,
    // Express sets req.res; express-rate-limit's callbacks take the response beside the request.
    identifier:
      keyGenerator === undefined
        ? clientAddress(options.ipv6Subnet ?? 56)
        : (req) => keyGenerator(req, req.res as Response),
    headers: false,
    ...(skip === undefined ? {} : { skip: (req: Request) => skip(req, req.res as Response) }),
    ...(logger === undefined ? {} : { logger }),
    // Its rule: a client that left before the response was ended failed, and is given back as it leaves.
    ...(skipFailedRequests === undefined
      ? {}
      : { skipFailedRequests, abortedRequestsFail: skipFailedRequests }),
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
  if (scope === undefined && unscoped.has(store as Store))
    throw configError(
      'scope',
      'is needed: another limiter in this style counts in this store without one, so the two would share their counts (give each limiter its own `scope`)',
    );
  return store as Store;
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
