// Tollgate's public, framework-free API.
export type { Decision, PolicyDecision } from './decision.js';
export { DECISION_OUTCOMES, type DecisionOutcome, decisionOutcome, isNearLimit } from './decision-outcome.js';
export { type Duration, parseDuration } from './duration.js';
export { TollgateError, type TollgateErrorCode } from './errors.js';
export {
  createGate,
  type DecisionEvent,
  type Gate,
  type GateOptions,
  type GateOutcome,
} from './gate.js';
export { type HeaderStyle, rateLimitHeaders } from './headers.js';
export { type AddressIdentityOptions, addressIdentity } from './identity/address-identity.js';
export { type ApiKeyIdentityOptions, apiKeyId, apiKeyIdentity } from './identity/api-key-identity.js';
export { type IdentifierHasher, identifierHasher } from './identity/identifier-hash.js';
export type { Identity } from './identity/identity.js';
export { bucketKey, memberOf, type ParsedBucketKey, parseBucketKey } from './key.js';
export { type ConsumeOptions, createLimiter, type Limiter, type LimiterOptions } from './limiter.js';
export type { Logger } from './logger.js';
export {
  type AnyPolicy,
  evaluatePolicies,
  fixedWindow,
  type Policy,
  type PolicyKind,
  type PolicyResult,
  slidingWindow,
  slidingWindowCounter,
  type TokenBucketOptions,
  type Transition,
  tokenBucket,
  type WindowOptions,
} from './policies/index.js';
export { MemoryStore, type MemoryStoreOptions, sharedMemoryStore } from './stores/memory-store.js';
export {
  type DegradedMode,
  degradedResponse,
  isStore,
  type Store,
  type StoreRequest,
  type StoreResponse,
} from './stores/store.js';
export type { Tiers } from './tiers.js';
