// Which keys make a `rateLimit` call express-rate-limit's, and the keys refused in that style with what to write instead.
import { configError } from '../../../core/errors.js';
import { knownKeys } from '../../../core/validate.js';
import { EXPRESS_RATE_LIMIT_KEYS, type ExpressRateLimitCompatOptions } from './types.js';

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
  'onDecision',
];
const SLOW_DOWN = "is express-slow-down's: Tollgate answers or rejects, it does not slow responses down";
/** Its keys (and its companions') that Tollgate cannot honour, and what to do instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  draft_polli_ratelimit_headers: "was express-rate-limit 6's: use `standardHeaders: 'draft-6'`",
  onLimitReached: 'was removed in express-rate-limit 7: do its work in `handler`',
  delayAfter: SLOW_DOWN,
  delayMs: SLOW_DOWN,
  maxDelayMs: SLOW_DOWN,
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
  'legacyReset',
  'abortedRequestsFail',
];

/** The key that makes these options express-rate-limit's, or undefined when they are Tollgate's own. */
export function expressRateLimitKey(options: unknown): string | undefined {
  if (typeof options !== 'object' || options === null) return undefined;
  return Object.keys(options).find(
    (key) => (EXPRESS_RATE_LIMIT_KEYS as readonly string[]).includes(key) || Object.hasOwn(UNSUPPORTED, key),
  );
}

/** Tollgate's own options, its style's retired ones, and typos, each refused with what to write instead. */
export function refuseForeignKeys(options: ExpressRateLimitCompatOptions, trigger: string): void {
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(UNSUPPORTED, key)) throw configError(key, UNSUPPORTED[key] as string);
    if (Object.hasOwn(TWINS, key)) throw configError(key, TWINS[key] as string);
    if (TOLLGATE_ONLY.includes(key))
      throw configError(
        key,
        `is Tollgate's own, and \`${trigger}\` is express-rate-limit's: one call takes one style, so leave out \`${key}\`, ` +
          "or write every option in Tollgate's (`windowMs` and `limit` become `policy: fixedWindow({ limit, windowMs })`, " +
          '`keyGenerator` becomes `identifier`, `standardHeaders` becomes `headers`)',
      );
  }
  knownKeys(`rateLimit in express-rate-limit's style (given \`${trigger}\`)`, options, [
    ...EXPRESS_RATE_LIMIT_KEYS,
    ...SHARED,
  ]);
}
