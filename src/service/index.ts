// `tollgate/service`: the rate limit service Envoy, nginx and Traefik call, configured with envoyproxy/ratelimit's YAML.

export { type ConfigFile, loadServiceConfig, type ServiceConfigOptions } from './config/load.js';
export { readServiceConfig } from './config/read-files.js';
export type {
  FailMode,
  HttpCheckRules,
  HttpDescriptorRule,
  HttpEntryRule,
  LimitMatch,
  LimitRule,
  ServiceConfig,
  SourcePlace,
} from './config/types.js';
export type { DescriptorOutcome, ServiceObserver } from './engine/observer.js';
export {
  Code,
  type CurrentLimit,
  type DescriptorStatus,
  type Entry,
  type HeaderValue,
  type LimitOverride,
  type RateLimitDescriptor,
  type RateLimitRequest,
  type RateLimitResponse,
  Unit,
} from './protocol/messages.js';
export { createRateLimitService, type PortOf, type RateLimitService } from './runtime/rate-limit-service.js';
export type { ListenOptions, RateLimitServiceOptions, ServiceLogger } from './runtime/service-options.js';
