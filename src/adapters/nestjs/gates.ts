// The gates of a Nest app: the module's, and one per @RateLimit over it, each built once and checked at start-up.
import type { OnModuleInit } from '@nestjs/common';
import { type DiscoveryService, MetadataScanner, type Reflector } from '@nestjs/core';
import { inContext, TollgateError } from '../../core/errors.js';
import { createGate, type Gate } from '../../gate/gate.js';
import { overApp } from '../../gate/options.js';
import { type HttpRequest, type NestRateLimitOptions, type RouteTargets, routeLimit } from './options.js';

export type NestGate = Gate<HttpRequest, unknown>;

export class RateLimitGates implements OnModuleInit {
  readonly #options: NestRateLimitOptions<unknown>;
  readonly #reflector: Reflector;
  readonly #discovery: DiscoveryService;
  readonly #module: NestGate;
  /** Keyed by the options object a @RateLimit holds, so every route it decorates shares one gate. */
  readonly #routes = new WeakMap<object, NestGate>();

  constructor(options: NestRateLimitOptions<unknown>, reflector: Reflector, discovery: DiscoveryService) {
    this.#options = options;
    this.#reflector = reflector;
    this.#discovery = discovery;
    this.#module = gate(options, 'TollgateModule');
  }

  /** The gate of the route `[handler, controller]`; undefined when the route is not limited. */
  forRoute(targets: RouteTargets): NestGate | undefined {
    const limit = routeLimit(this.#reflector, targets);
    if (limit === undefined) return this.#module;
    if (limit === false) return undefined;
    let routeGate = this.#routes.get(limit);
    if (routeGate === undefined) {
      routeGate = gate(overApp(this.#options, limit, this.#module.limiter), '@RateLimit');
      this.#routes.set(limit, routeGate);
    }
    return routeGate;
  }

  /** Builds every controller's gates as the app starts, so a bad @RateLimit fails `app.init()`, not a request. */
  onModuleInit(): void {
    const scanner = new MetadataScanner();
    for (const { metatype } of this.#discovery.getControllers()) {
      if (typeof metatype !== 'function') continue;
      const prototype: Record<string, unknown> = metatype.prototype;
      for (const method of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method];
        try {
          if (typeof handler === 'function') this.forRoute([handler, metatype]);
        } catch (error) {
          // The option alone does not say which of the app's @RateLimit decorators holds it.
          if (!(error instanceof TollgateError)) throw error;
          const where = (message: string) => `${message} (@RateLimit on ${metatype.name}.${method})`;
          throw inContext(error, where, error.option ?? '@RateLimit');
        }
      }
    }
  }
}

function gate(options: NestRateLimitOptions<unknown>, name: string): NestGate {
  return createGate<HttpRequest, unknown>(options as NestRateLimitOptions, {
    name,
    identifier: (request) => request.ip,
  });
}
