// `tollgate/store`: what the author of a custom store needs: the contract, the policies' transitions and the key layout.

export type {
  Operation,
  PolicyKind,
  PolicyResult,
  StateWrite,
  StoreAction,
  Transition,
  Write,
} from '../policies/index.js';
export { evaluatePolicies } from '../policies/index.js';
export { bucketKey, memberOf, type ParsedBucketKey, parseBucketKey } from './key.js';
export {
  type DegradedMode,
  degradedResponse,
  type EvictionState,
  isStore,
  type RetentionCap,
  type Store,
  type StoreBreaker,
  type StoreErrorKind,
  type StoreRequest,
  type StoreResponse,
  type StoreStats,
} from './store.js';
