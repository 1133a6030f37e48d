// `tollgate`: what an application uses: limiters and their policies, the in-memory store, identities, headers.

export type { Duration } from './core/duration.js';
export { TollgateError, type TollgateErrorCode } from './core/errors.js';
export type { Logger } from './core/logger.js';
export type { Decision, PolicyDecision } from './decision/decision.js';
export {
  type HeaderOptions,
  type HeaderStyle,
  type LegacyReset,
  rateLimitHeaders,
} from './decision/headers.js';
export { DECISION_OUTCOMES, type DecisionOutcome, decisionOutcome, isNearLimit } from './decision/outcome.js';
export type { RateLimitInfo } from './decision/rate-limit-info.js';
export type { DecisionEvent } from './gate/options.js';
export { type AddressIdentityOptions, addressIdentity } from './identity/address-identity.js';
export { type ApiKeyIdentityOptions, apiKeyId, apiKeyIdentity } from './identity/api-key-identity.js';
export { type IdentifierHasher, identifierHasher } from './identity/identifier-hash.js';
export type { Identity } from './identity/identity.js';
export {
  type ConsumeOptions,
  createLimiter,
  type Limiter,
  type LimiterOptions,
  type RefundOptions,
  type WaitOptions,
} from './limiter/limiter.js';
export type { Tiers } from './limiter/tiers.js';
export {
  type AnyPolicy,
  type ConcurrencyOptions,
  concurrency,
  fixedWindow,
  type Policy,
  type PolicyKind,
  slidingWindow,
  slidingWindowCounter,
  type TokenBucketOptions,
  tokenBucket,
  type WindowOptions,
} from './policies/index.js';
export { MemoryStore, type MemoryStoreOptions } from './stores/memory/memory-store.js';
export type { Store } from './stores/store.js';
