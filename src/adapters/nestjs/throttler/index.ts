/**
 * @nestjs/throttler's API (v6), on Tollgate: change the import from `'@nestjs/throttler'` to
 * `'tollgate/nestjs-throttler'` and the app behaves the same, its counts kept by a Tollgate store. The default
 * storage is a bounded MemoryStore; a Tollgate `RedisStore` given as `storage` counts exactly across every
 * instance (Redis Cluster too), and any ThrottlerStorage written for @nestjs/throttler works unchanged.
 *
 * @module
 * @example
 * ```ts
 * import { Module } from '@nestjs/common';
 * import { APP_GUARD } from '@nestjs/core';
 * import { ThrottlerGuard, ThrottlerModule, minutes } from 'tollgate/nestjs-throttler';
 * import { RedisStore } from 'tollgate/redis';
 *
 * @Module({
 *   imports: [
 *     ThrottlerModule.forRoot({
 *       throttlers: [{ ttl: minutes(1), limit: 100 }],
 *       storage: new RedisStore({ url: process.env.REDIS_URL }),
 *     }),
 *   ],
 *   providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
 * })
 * export class AppModule {}
 * ```
 */
export {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  SkipThrottle,
  Throttle,
  type ThrottlerMethodOrControllerOptions,
} from './decorators.js';
export { ThrottlerException, throttlerMessage } from './exception.js';
export { ThrottlerGuard } from './guard.js';
export { DEFAULT_IPV6_SUBNET_PREFIX, normalizeIp } from './ip.js';
export { ThrottlerModule } from './module.js';
export {
  getOptionsToken,
  getStorageToken,
  type Resolvable,
  type ThrottlerAsyncOptions,
  type ThrottlerGenerateKeyFunction,
  type ThrottlerGetTrackerFunction,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
  type ThrottlerOptionsFactory,
  type ThrottlerRequest,
} from './options.js';
export {
  DEFAULT_SWEEP_INTERVAL,
  StoreThrottlerStorage,
  ThrottlerStorage,
  type ThrottlerStorageRecord,
  ThrottlerStorageService,
} from './storage.js';
export { days, hours, minutes, seconds, weeks } from './utilities.js';
