// `tollgate/express-rate-limit`: express-rate-limit 8's API on Tollgate, so an app moves by changing its import.
import { rateLimit } from './rate-limit.js';

export { ipKeyGenerator } from './ip-key-generator.js';
export { MemoryStore } from './memory-store.js';
export { rateLimit } from './rate-limit.js';
export { type TollgateStoreOptions, tollgateStore } from './tollgate-counter.js';
export type {
  AugmentedRequest,
  Client,
  ClientRateLimitInfo,
  DraftHeadersVersion,
  EnabledValidations,
  IncrementCallback,
  IncrementResponse,
  LegacyStore,
  Logger,
  LoggerFn,
  Options,
  RateLimitExceededEventHandler,
  RateLimitInfo,
  RateLimitReachedEventHandler,
  RateLimitRequestHandler,
  Store,
  ValueDeterminingMiddleware,
} from './types.js';
export type { Validations } from './validations.js';

/** Durations in milliseconds, for `windowMs: 15 * MINUTE`. */
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/**
 * The default export, as express-rate-limit has one: `import rateLimit from 'tollgate/express-rate-limit'`.
 * @alias
 */
export default rateLimit;
