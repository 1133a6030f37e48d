// TollgateModule: registers the app's limiter options once, and the guard app-wide when asked to.
import {
  type DynamicModule,
  type FactoryProvider,
  Module,
  type ModuleMetadata,
  type Provider,
} from '@nestjs/common';
import { APP_GUARD, DiscoveryModule, DiscoveryService, Reflector } from '@nestjs/core';
import { configError } from '../../core/errors.js';
import { knownKeys } from '../../core/validate.js';
import { RateLimitGates } from './gates.js';
import { RATE_LIMIT_GATES, RateLimitGuard } from './guard.js';
import type { HttpRequest, NestRateLimitOptions, TollgateModuleOptions } from './options.js';

const OPTIONS = Symbol('TollgateModuleOptions');

export interface TollgateModuleAsyncOptions<Req = HttpRequest, Res = unknown> {
  /** Modules whose providers `inject` names. */
  readonly imports?: ModuleMetadata['imports'];
  /** Providers whose instances `useFactory` is given, in order. */
  readonly inject?: FactoryProvider['inject'];
  /** Returns the options (without `global`, which must be known before the factory runs). */
  readonly useFactory: (
    ...args: never[]
  ) => NestRateLimitOptions<Req, Res> | Promise<NestRateLimitOptions<Req, Res>>;
  /** True: guard every route of the app (RateLimitGuard as APP_GUARD). */
  readonly global?: boolean;
}

/**
 * The app's rate limiting: the store and default limits every guarded route spends from, unless its @RateLimit
 * says otherwise. Import it once, in the root module; it is global, so `@UseGuards(RateLimitGuard)` works in
 * every module.
 *
 * @example
 * ```ts
 * // Every route limited to 100 requests a minute per client, unless its @RateLimit says otherwise.
 * @Module({ imports: [TollgateModule.forRoot({ requestsPerMinute: 100, global: true })] })
 * export class AppModule {}
 *
 * // Options known only once other providers are: a RedisStore from the app's configuration.
 * TollgateModule.forRootAsync({
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ store: new RedisStore({ url: config.get('REDIS_URL') }) }),
 *   global: true,
 * });
 * ```
 */
// biome-ignore lint/complexity/noStaticOnlyClass: Nest knows a module by its class, and forRoot is its idiom.
export class TollgateModule {
  static forRoot<Req = HttpRequest, Res = unknown>(
    options: TollgateModuleOptions<Req, Res> = {},
  ): DynamicModule {
    if (typeof options !== 'object' || options === null)
      throw configError('options', 'must be an object', options);
    const { global, ...gateOptions } = options;
    return dynamicModule(global, [], { provide: OPTIONS, useValue: gateOptions });
  }

  static forRootAsync<Req = HttpRequest, Res = unknown>(
    options: TollgateModuleAsyncOptions<Req, Res>,
  ): DynamicModule {
    if (typeof options !== 'object' || options === null)
      throw configError('options', 'must be an object', options);
    knownKeys('TollgateModule.forRootAsync', options, ['imports', 'inject', 'useFactory', 'global']);
    const { global, imports = [], inject = [], useFactory } = options;
    if (typeof useFactory !== 'function') throw configError('useFactory', 'must be a function', useFactory);
    return dynamicModule(global, imports, { provide: OPTIONS, useFactory, inject });
  }
}

// What the decorator would do, applied as a function: no decorator syntax is needed to build this.
Module({})(TollgateModule);

function dynamicModule(global: unknown, imports: NonNullable<ModuleMetadata['imports']>, options: Provider) {
  if (global !== undefined && typeof global !== 'boolean')
    throw configError('global', 'must be a boolean', global);
  const gates: Provider = {
    provide: RATE_LIMIT_GATES,
    useFactory: (
      resolved: NestRateLimitOptions<unknown>,
      reflector: Reflector,
      discovery: DiscoveryService,
    ) => new RateLimitGates(resolved, reflector, discovery),
    inject: [OPTIONS, Reflector, DiscoveryService],
  };
  return {
    module: TollgateModule,
    // So that a guard bound with @UseGuards in any module finds the gates.
    global: true,
    imports: [DiscoveryModule, ...imports],
    providers: [options, gates, ...(global ? [{ provide: APP_GUARD, useClass: RateLimitGuard }] : [])],
    exports: [RATE_LIMIT_GATES],
  } satisfies DynamicModule;
}
