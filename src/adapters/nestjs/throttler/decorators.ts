// @Throttle and @SkipThrottle (per named throttler, on a controller or a handler) and the injection decorators.
import { Inject, SetMetadata } from '@nestjs/common';
import {
  getOptionsToken,
  getStorageToken,
  type Resolvable,
  type ThrottlerGenerateKeyFunction,
  type ThrottlerGetTrackerFunction,
} from './options.js';

/** What @Throttle may set for one named throttler, over the module's. */
export interface ThrottlerMethodOrControllerOptions {
  limit?: Resolvable<number>;
  ttl?: Resolvable<number>;
  blockDuration?: Resolvable<number>;
  getTracker?: ThrottlerGetTrackerFunction;
  generateKey?: ThrottlerGenerateKeyFunction;
}

/** The metadata keys, one per field and throttler name: `${key}${name}`. */
export const THROTTLE_KEYS = {
  limit: 'tollgate:throttler:limit:',
  ttl: 'tollgate:throttler:ttl:',
  blockDuration: 'tollgate:throttler:block-duration:',
  getTracker: 'tollgate:throttler:tracker:',
  generateKey: 'tollgate:throttler:key-generator:',
  skip: 'tollgate:throttler:skip:',
} as const;

type Decorator = MethodDecorator & ClassDecorator;
type Entry = readonly [key: string, value: unknown];

/** Sets each entry where Nest's Reflector looks: a handler's function, or a controller's class. */
function metadata(entries: () => Entry[]): Decorator {
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    for (const [name, value] of entries())
      (SetMetadata(name, value) as (...args: unknown[]) => void)(target, key, descriptor);
  }) as Decorator;
}

/**
 * Overrides named throttlers' figures on a controller or a handler (a handler's win over its controller's):
 * `@Throttle({ default: { limit: 3, ttl: 60000 } })`. Each field left out keeps the module's.
 */
export const Throttle = (options: Record<string, ThrottlerMethodOrControllerOptions>): Decorator =>
  metadata(() =>
    Object.entries(options).flatMap(([name, figures]) =>
      (['limit', 'ttl', 'blockDuration', 'getTracker', 'generateKey'] as const).map(
        (field): Entry => [THROTTLE_KEYS[field] + name, figures[field]],
      ),
    ),
  );

/**
 * Skips throttlers on a controller or a handler: every name given `true` (default `{ default: true }`);
 * `@SkipThrottle({ default: false })` on a handler throttles it again under a skipping controller.
 */
export const SkipThrottle = (skip: Record<string, boolean> = { default: true }): Decorator =>
  metadata(() => Object.entries(skip).map(([name, value]): Entry => [THROTTLE_KEYS.skip + name, value]));

/** Injects the module's options (in a guard of your own, say). */
export const InjectThrottlerOptions = (): PropertyDecorator & ParameterDecorator => Inject(getOptionsToken());

/** Injects the module's ThrottlerStorage. */
export const InjectThrottlerStorage = (): PropertyDecorator & ParameterDecorator => Inject(getStorageToken());
