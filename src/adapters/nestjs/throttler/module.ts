// ThrottlerModule: registers the throttlers and their storage app-wide, from options given or made by a factory.
import { type DynamicModule, Global, Module, type Provider } from '@nestjs/common';
import { configError } from '../../../core/errors.js';
import { isStore } from '../../../stores/store.js';
import { figureProblem, wholeFigures } from './figures.js';
import {
  getOptionsToken,
  type ThrottlerAsyncOptions,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
} from './options.js';
import { StoreThrottlerStorage, ThrottlerStorage, ThrottlerStorageService } from './storage.js';

/**
 * The app's throttlers, for ThrottlerGuard: `forRoot` with the options, `forRootAsync` with a factory (or a class
 * implementing ThrottlerOptionsFactory). Global: import it once, in the root module.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [ThrottlerModule.forRoot([{ name: 'short', ttl: seconds(1), limit: 3 }, { ttl: minutes(1), limit: 100 }])],
 *   providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
 * })
 * export class AppModule {}
 * ```
 */
// biome-ignore lint/complexity/noStaticOnlyClass: Nest knows a module by its class, and forRoot is its idiom.
export class ThrottlerModule {
  static forRoot(options: ThrottlerModuleOptions = []): DynamicModule {
    checkOptions(options);
    const providers: Provider[] = [{ provide: getOptionsToken(), useValue: options }, storageProvider];
    return { module: ThrottlerModule, providers, exports: providers };
  }

  static forRootAsync(options: ThrottlerAsyncOptions): DynamicModule {
    if (typeof options !== 'object' || options === null)
      throw configError('options', 'must be an object', options);
    const { useFactory, useClass, useExisting, inject = [], imports = [] } = options;
    const made: Provider[] = [];
    if (useFactory !== undefined) {
      made.push({ provide: getOptionsToken(), useFactory: checked(useFactory), inject });
    } else if (useExisting !== undefined || useClass !== undefined) {
      const factory = (useExisting ?? useClass) as NonNullable<typeof useClass>;
      made.push({
        provide: getOptionsToken(),
        useFactory: checked((made: { createThrottlerOptions: () => unknown }) =>
          made.createThrottlerOptions(),
        ),
        inject: [factory],
      });
      if (useExisting === undefined) made.push({ provide: factory, useClass: factory });
    } else {
      throw configError('useFactory', 'or `useClass` or `useExisting` must be given');
    }
    const providers = [...made, storageProvider];
    return { module: ThrottlerModule, imports, providers, exports: providers };
  }
}

Global()(ThrottlerModule);
Module({})(ThrottlerModule);

/** The storage given (a Tollgate store wrapped), else the default one in memory. */
const storageProvider: Provider = {
  provide: ThrottlerStorage,
  useFactory: (options: ThrottlerModuleOptions) => {
    const storage = Array.isArray(options) ? undefined : options.storage;
    if (!storage) return new ThrottlerStorageService();
    return isStore(storage) ? new StoreThrottlerStorage(storage) : storage;
  },
  inject: [getOptionsToken()],
};

/** A factory whose options are checked as `forRoot`'s are, once they are made. */
function checked<A extends unknown[]>(factory: (...args: A) => unknown) {
  return async (...args: A) => {
    const options = (await factory(...args)) as ThrottlerModuleOptions;
    checkOptions(options);
    return options;
  };
}

function checkOptions(options: ThrottlerModuleOptions): void {
  const throttlers = Array.isArray(options)
    ? options
    : (options as { throttlers?: unknown } | null)?.throttlers;
  if (!Array.isArray(throttlers))
    throw configError('throttlers', 'must be an array of throttlers (or the options be one)', throttlers);
  const storage = Array.isArray(options) ? undefined : options.storage;
  if (storage && !isStore(storage) && typeof (storage as { increment?: unknown }).increment !== 'function')
    throw configError(
      'storage',
      'must be a ThrottlerStorage (with increment()) or a Tollgate store',
      storage,
    );
  // A storage of the app's own counts by any figures; a Tollgate store's limits are known now.
  if (!storage || isStore(storage)) for (const throttler of throttlers) checkStaticFigures(throttler);
}

/**
 * The figures given as numbers (or numeric text), checked as the storage would on the first request: a figure
 * given as a function of the request is checked when it is resolved.
 */
function checkStaticFigures(throttler: ThrottlerOptions): void {
  const value = (figure: unknown) =>
    typeof figure === 'string' && figure.trim() !== '' ? Number(figure) : figure;
  const [ttl, limit] = [value(throttler?.ttl), value(throttler?.limit)];
  const blockDuration = value(throttler?.blockDuration) ?? ttl;
  // A figure given as a function stands in as one the store takes.
  const figures = wholeFigures(
    typeof ttl === 'number' ? ttl : 1,
    typeof limit === 'number' ? limit : 0,
    typeof blockDuration === 'number' ? blockDuration : 0,
  );
  const problem = figureProblem(figures);
  if (problem !== undefined)
    throw configError(
      problem.option,
      `of the "${throttler?.name ?? 'default'}" throttler ${problem.requirement}`,
      problem.value,
    );
}
