// The plugin's options resolved as @fastify/rate-limit resolves them: once per registration, and per route over them.
import type { FastifyRequest } from 'fastify';
import { configError } from '../../../core/errors.js';
import { ipv6SubnetOf, normalizeIP } from './address.js';
import { describeWait, parseTimeWindow } from './duration-text.js';
import type {
  ErrorResponseBuilderContext,
  RateLimitLabels,
  RateLimitOptions,
  RateLimitPluginOptions,
  RateLimitRouteParams,
  ResolvedRateLimitParams,
} from './types.js';

const DEFAULT_MAX = 1000;
const DEFAULT_TIME_WINDOW = 60_000;

const HEADERS: RateLimitLabels = {
  rateLimit: 'x-ratelimit-limit',
  rateRemaining: 'x-ratelimit-remaining',
  rateReset: 'x-ratelimit-reset',
  retryAfter: 'retry-after',
};
const DRAFT_SPEC_HEADERS: RateLimitLabels = {
  rateLimit: 'ratelimit-limit',
  rateRemaining: 'ratelimit-remaining',
  rateReset: 'ratelimit-reset',
  retryAfter: 'retry-after',
};

const nothing = () => {};

/** The default key, the client's address; it alone is given the subnet, so the hook can tell it from the app's. */
export const defaultKeyGenerator = (req: FastifyRequest, ipv6Subnet?: number): string =>
  normalizeIP(req.ip, ipv6Subnet);

/** The default rejection: an error with the status, for Fastify's error handler to answer. */
function defaultErrorResponse(_req: FastifyRequest, context: ErrorResponseBuilderContext): Error {
  return Object.assign(new Error(`Rate limit exceeded, retry in ${context.after}`), {
    statusCode: context.statusCode,
  });
}

/** The wait in a rejection's words: '1 minute'. */
export const waitText = (seconds: number): string => describeWait(seconds * 1000);

/** The registration's options, each a value of the right kind or its default, as the plugin takes them. */
export function pluginParams(settings: RateLimitPluginOptions): ResolvedRateLimitParams {
  if (typeof settings !== 'object' || settings === null)
    throw configError('options', 'must be an object', settings);
  const enableDraftSpec = settings.enableDraftSpec === true;
  const labels = enableDraftSpec ? DRAFT_SPEC_HEADERS : HEADERS;
  const custom = typeof settings.errorResponseBuilder === 'function';
  return {
    global: typeof settings.global === 'boolean' ? settings.global : true,
    enableDraftSpec,
    labels,
    addHeaders: {
      [labels.rateLimit]: true,
      [labels.rateRemaining]: true,
      [labels.rateReset]: true,
      [labels.retryAfter]: true,
      ...settings.addHeaders,
    },
    addHeadersOnExceeding: {
      [labels.rateLimit]: true,
      [labels.rateRemaining]: true,
      [labels.rateReset]: true,
      ...settings.addHeadersOnExceeding,
    },
    max: maxOf(settings.max),
    timeWindow: timeWindowOf(settings.timeWindow),
    hook: settings.hook || 'onRequest',
    allowList: settings.allowList || null,
    ban: banOf(settings.ban),
    onBanReach: functionOr(settings.onBanReach, nothing),
    onExceeding: functionOr(settings.onExceeding, nothing),
    onExceeded: functionOr(settings.onExceeded, nothing),
    continueExceeding: settings.continueExceeding === true,
    exponentialBackoff: settings.exponentialBackoff === true,
    ipv6Subnet: ipv6SubnetOf(settings.ipv6Subnet),
    keyGenerator: functionOr(settings.keyGenerator, defaultKeyGenerator),
    errorResponseBuilder: custom
      ? (settings.errorResponseBuilder as ResolvedRateLimitParams['errorResponseBuilder'])
      : defaultErrorResponse,
    isCustomErrorMessage: custom,
    skipOnError: settings.skipOnError === true,
  };
}

/**
 * A route's (or a `fastify.rateLimit()` hook's) options over the registration's: every key of theirs replaces the
 * registration's, as given, then the numbers are read again. `routeInfo` is the route, for its store.
 */
export function routeParams(
  plugin: ResolvedRateLimitParams,
  options: RateLimitOptions,
  routeInfo: RateLimitRouteParams['routeInfo'],
): RateLimitRouteParams {
  const merged = { ...plugin, ...options, routeInfo } as RateLimitRouteParams;
  merged.timeWindow = timeWindowOf(merged.timeWindow);
  merged.max = maxOf(merged.max);
  merged.ban = banOf(merged.ban);
  merged.ipv6Subnet = ipv6SubnetOf(merged.ipv6Subnet);
  if (merged.groupId !== undefined && typeof merged.groupId !== 'string')
    throw configError('groupId', 'must be a string', merged.groupId);
  return merged;
}

function maxOf(max: unknown): ResolvedRateLimitParams['max'] {
  if (typeof max === 'function') return max as ResolvedRateLimitParams['max'];
  return wholeOrUndefined(max) ?? DEFAULT_MAX;
}

/** A number of ms, a duration in words, or a function of the request; the default for anything else. */
function timeWindowOf(timeWindow: unknown): ResolvedRateLimitParams['timeWindow'] {
  if (typeof timeWindow === 'function') return timeWindow as ResolvedRateLimitParams['timeWindow'];
  if (typeof timeWindow !== 'string') return wholeOrUndefined(timeWindow) ?? DEFAULT_TIME_WINDOW;
  const ms = parseTimeWindow(timeWindow);
  // The plugin would fail every request on it: refused here, once.
  if (ms === undefined)
    throw configError('timeWindow', "must be a number of ms or a duration such as '1 minute'", timeWindow);
  return ms;
}

/** Hits past `max` that get a client banned; -1 for none. */
function banOf(ban: unknown): number {
  return wholeOrUndefined(ban) ?? -1;
}

function wholeOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : undefined;
}

function functionOr<F>(value: unknown, fallback: F): F {
  return typeof value === 'function' ? (value as F) : fallback;
}
