// Fastify 5 plugin: app-wide limits by route `config.rateLimit`, and `fastify.rateLimit()` hooks for routes' own.
import type { FastifyPluginAsync, RouteOptions } from 'fastify';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import { type FastifyRateLimitHook, limitHook } from './hook.js';
import {
  decoratorPlan,
  type FastifyLimitStage,
  type FastifyRateLimitHookOptions,
  type FastifyRateLimitOptions,
  type FastifyRouteRateLimitOptions,
  pluginPlan,
  routePlan,
} from './options.js';
import { unencapsulated } from './plugin-meta.js';

export { type FastifyRateLimitHook, RateLimitError } from './hook.js';
export type {
  FastifyLimitStage,
  FastifyRateLimitHookOptions,
  FastifyRateLimitOptions,
  FastifyRouteRateLimitOptions,
} from './options.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Options over the plugin's for this route, or `false` to leave it unlimited. */
    rateLimit?: FastifyRouteRateLimitOptions | false;
  }
  interface FastifyRequest {
    /** The request's rate-limit figures, set on every request a limit counted (admitted or not). */
    rateLimit: RateLimitInfo | undefined;
  }
  interface FastifyInstance {
    /**
     * A limit of the route's own, on the plugin's store (and, without limiter options, its buckets), as a hook:
     * `app.get('/x', { preHandler: app.rateLimit({ cost: 5 }) }, handler)`. A route given one is not limited
     * app-wide too.
     */
    rateLimit(options?: FastifyRateLimitHookOptions): FastifyRateLimitHook;
  }
}

/** Every hook `fastify.rateLimit()` made, so a route placing one is known to limit itself. */
const ownLimits = new WeakSet<object>();

interface Placed {
  readonly stage: FastifyLimitStage;
  readonly hook: FastifyRateLimitHook;
}

const plugin: FastifyPluginAsync<FastifyRateLimitOptions> = async (fastify, options) => {
  const plan = pluginPlan(options);
  const appWide = limitHook(plan.limit, 'rateLimit');
  const unconfigured: Placed | undefined = plan.global
    ? { stage: plan.stage, hook: appWide.hook }
    : undefined;
  const routes = new WeakMap<object, Placed>();
  // Marks the config of each route this registration's onRoute saw; Fastify copies a route's config (symbol keys
  // too) into the one its requests carry, so the mark tells the routes declared before the plugin loaded.
  const seenByOnRoute = Symbol('tollgate.onRoute');
  const placedFor = (config: FastifyRouteRateLimitOptions | false | undefined): Placed | undefined => {
    if (config === undefined) return unconfigured;
    if (config === false) return undefined;
    let placed = routes.get(config);
    if (placed === undefined) {
      const { stage, limit } = routePlan(plan, config, appWide.limiter);
      placed = { stage, hook: limitHook(limit, 'config.rateLimit').hook };
      routes.set(config, placed);
    }
    return placed;
  };

  // The first registration's decorators serve its scope and those inside it, as @fastify/rate-limit's do.
  if (!fastify.hasRequestDecorator('rateLimit')) fastify.decorateRequest('rateLimit', undefined);
  if (!fastify.hasDecorator('rateLimit'))
    fastify.decorate('rateLimit', (hookOptions: unknown = {}) => {
      const { hook } = limitHook(decoratorPlan(plan, hookOptions, appWide.limiter), 'fastify.rateLimit()');
      ownLimits.add(hook);
      return hook;
    });
  fastify.addHook('onRoute', (route) => {
    // A new object: the route's config may be shared with other routes.
    const config = { ...route.config, [seenByOnRoute]: true };
    if (config.rateLimit === undefined && limitsItself(route)) config.rateLimit = false;
    route.config = config;
    // Building a route's gate as the route is declared reports a bad route config at start-up; a route declared
    // before this plugin loaded (no `await` on register) gets its gate on its first request instead.
    const placed = placedFor(config.rateLimit);
    // The route's own, after its other preHandler hooks and the app's (however late those were added), so it
    // can key requests by what they set. A new array: the route's may be shared with other routes.
    if (placed?.stage === 'preHandler') route.preHandler = [...[route.preHandler ?? []].flat(), placed.hook];
  });
  // One app-wide onRequest hook rather than one per route, so routes declared before the plugin and 404s are
  // limited too.
  fastify.addHook('onRequest', async (request, reply) => {
    const placed = placedFor(request.routeOptions.config.rateLimit);
    return placed?.stage === 'onRequest' ? placed.hook(request, reply) : undefined;
  });
  // A preHandler limit goes on the route in onRoute, which never sees a 404 nor a route declared before this plugin
  // loaded (no `await` on register): an app-level hook limits those, before the route's own preHandler hooks.
  fastify.addHook('preHandler', async (request, reply) => {
    const { config } = request.routeOptions;
    if (seenByOnRoute in config) return undefined;
    const placed = placedFor(config.rateLimit);
    return placed?.stage === 'preHandler' ? placed.hook(request, reply) : undefined;
  });
};

function limitsItself(route: RouteOptions): boolean {
  return [route.onRequest, route.preHandler].flat().some((hook) => hook !== undefined && ownLimits.has(hook));
}

/**
 * The plugin: `app.register(rateLimit, options)`. It is not encapsulated, so it limits the whole app.
 *
 * @example
 * ```ts
 * const app = Fastify({ logger: true });
 * await app.register(rateLimit, { requestsPerMinute: 100 });
 * app.get('/quota', async (request) => ({ remaining: request.rateLimit?.remaining }));
 * ```
 */
export const rateLimit: FastifyPluginAsync<FastifyRateLimitOptions> = unencapsulated(plugin, 'tollgate');
