// @nestjs/throttler's options and the shapes its guard hands to overridable methods, with their injection tokens.
import type { ExecutionContext, ModuleMetadata, Type } from '@nestjs/common';
import type { Store } from '../../../stores/store.js';
import { ThrottlerStorage, type ThrottlerStorageRecord } from './storage.js';

/** A figure, or a function of the request's context that gives it. */
export type Resolvable<T extends number | string | boolean> =
  | T
  | ((context: ExecutionContext) => T | Promise<T>);

export type ThrottlerGetTrackerFunction = (
  // biome-ignore lint/suspicious/noExplicitAny: the request of any platform, as @nestjs/throttler types it.
  req: Record<string, any>,
  context: ExecutionContext,
) => Promise<string> | string;
export type ThrottlerGenerateKeyFunction = (
  context: ExecutionContext,
  trackerString: string,
  throttlerName: string,
) => string;

/** One named throttler: `limit` requests per `ttl` ms, blocked for `blockDuration` ms (default `ttl`) past it. */
export interface ThrottlerOptions {
  /** Default `'default'`: its headers carry no suffix; other names suffix them (`X-RateLimit-Limit-short`). */
  name?: string;
  limit: Resolvable<number>;
  ttl: Resolvable<number>;
  blockDuration?: Resolvable<number>;
  ignoreUserAgents?: RegExp[];
  skipIf?: (context: ExecutionContext) => boolean;
  getTracker?: ThrottlerGetTrackerFunction;
  generateKey?: ThrottlerGenerateKeyFunction;
  setHeaders?: boolean;
}

/**
 * The throttlers alone, or with what they share. `storage` is any ThrottlerStorage, or a Tollgate store
 * (`RedisStore`, `MemoryStore`), which counts exactly across every instance that shares it.
 */
export type ThrottlerModuleOptions =
  | ThrottlerOptions[]
  | {
      ignoreUserAgents?: RegExp[];
      skipIf?: (context: ExecutionContext) => boolean;
      getTracker?: ThrottlerGetTrackerFunction;
      generateKey?: ThrottlerGenerateKeyFunction;
      errorMessage?:
        | string
        | ((context: ExecutionContext, throttlerLimitDetail: ThrottlerLimitDetail) => string);
      storage?: ThrottlerStorage | Store;
      ipv6SubnetPrefix?: number;
      throttlers: ThrottlerOptions[];
      setHeaders?: boolean;
    };

export interface ThrottlerOptionsFactory {
  createThrottlerOptions(): Promise<ThrottlerModuleOptions> | ThrottlerModuleOptions;
}

export interface ThrottlerAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useExisting?: Type<ThrottlerOptionsFactory>;
  useClass?: Type<ThrottlerOptionsFactory>;
  // biome-ignore lint/suspicious/noExplicitAny: whatever `inject` names, as @nestjs/throttler types it.
  useFactory?: (...args: any[]) => Promise<ThrottlerModuleOptions> | ThrottlerModuleOptions;
  // biome-ignore lint/suspicious/noExplicitAny: providers of any kind, as @nestjs/throttler types them.
  inject?: any[];
}

/** What a blocked request's exception and error message are told. */
export interface ThrottlerLimitDetail extends ThrottlerStorageRecord {
  ttl: number;
  limit: number;
  key: string;
  tracker: string;
}

/** What `handleRequest` is given for one throttler, its figures resolved for this request. */
export interface ThrottlerRequest {
  context: ExecutionContext;
  limit: number;
  ttl: number;
  throttler: ThrottlerOptions;
  blockDuration: number;
  getTracker: ThrottlerGetTrackerFunction;
  generateKey: ThrottlerGenerateKeyFunction;
}

/** The token of the module's options: the same as @nestjs/throttler's, so code injecting it by name still works. */
const THROTTLER_OPTIONS = 'THROTTLER:MODULE_OPTIONS';

export const getOptionsToken = (): string => THROTTLER_OPTIONS;
export const getStorageToken = (): symbol => ThrottlerStorage;
