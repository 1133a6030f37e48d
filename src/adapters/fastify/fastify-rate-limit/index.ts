// `tollgate/fastify-rate-limit`: @fastify/rate-limit's plugin, its options, store contract and answers, on Tollgate.
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify';
import { configError } from '../../../core/errors.js';
import { isStore } from '../../../stores/store.js';
import { unencapsulated } from '../plugin-meta.js';
import { checkLimit, type Limit, limitHandler, type RateLimitHandler } from './limit.js';
import { pluginParams, routeParams } from './options.js';
import { RedisOptionStore } from './redis-option.js';
import { TollgateRateLimitStore } from './tollgate-store.js';
import type {
  CreateRateLimitOptions,
  FastifyRateLimitStore,
  FastifyRateLimitStoreCtor,
  RateLimitCheck,
  RateLimitOptions,
  RateLimitPluginOptions,
  ResolvedRateLimitParams,
} from './types.js';

export { normalizeIP } from './address.js';
export type { RateLimitHandler } from './limit.js';
export type * from './types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** A limiter to call yourself: checks a request (and counts it, unless `increment` is false). */
    createRateLimit(
      options?: CreateRateLimitOptions & RateLimitOptions,
    ): (req: FastifyRequest, callOptions?: { increment?: boolean }) => Promise<RateLimitCheck>;
    /** A limit over the plugin's options as a hook for a route: `{ onRequest: fastify.rateLimit({ max: 5 }) }`. */
    rateLimit(options?: RateLimitOptions): RateLimitHandler;
  }
}

/** The store of a registration: a store class of the plugin's contract, a Tollgate store, Redis, or memory. */
function storeOf(settings: RateLimitPluginOptions, params: ResolvedRateLimitParams): FastifyRateLimitStore {
  const { store, redis, nameSpace } = settings;
  if (typeof store === 'function') return new (store as FastifyRateLimitStoreCtor)(params);
  if (isStore(store)) return TollgateRateLimitStore.over(store, params, nameSpace);
  if (store)
    throw configError(
      'store',
      "must be a store class of @fastify/rate-limit's contract, or a Tollgate store (MemoryStore, RedisStore)",
      store,
    );
  if (redis) return new RedisOptionStore(redis, params, nameSpace);
  return TollgateRateLimitStore.local(params, settings.cache);
}

/** A limit of the registration's options over its own, with a store of its own (a child of the registration's). */
function childLimit(root: Limit, options: RateLimitOptions, routeInfo: object): Limit {
  const params = routeParams(root.params, options, routeInfo);
  return { params, store: root.store.child(params), ran: root.ran };
}

/** The limit for options given to a decorator: the registration's own without any. */
function decoratorLimit(root: Limit, options: unknown): Limit {
  return typeof options === 'object' && options !== null ? childLimit(root, options, {}) : root;
}

async function plugin(fastify: FastifyInstance, settings: RateLimitPluginOptions): Promise<void> {
  const params = pluginParams(settings);
  // One mark per registration: a request its limits meet in several hooks is counted by the first alone.
  const root: Limit = {
    params,
    store: storeOf(settings, params),
    ran: Symbol('fastify.request.rateLimitRan'),
  };
  fastify.decorateRequest(root.ran, false);
  if (!fastify.hasDecorator('createRateLimit'))
    fastify.decorate('createRateLimit', (options?: unknown) => {
      const limit = decoratorLimit(root, options);
      return (req: FastifyRequest, callOptions?: { increment?: boolean }) =>
        checkLimit(limit, req, callOptions);
    });
  if (!fastify.hasDecorator('rateLimit'))
    fastify.decorate('rateLimit', (options?: unknown) => limitHandler(decoratorLimit(root, options)));
  fastify.addHook('onRoute', (route) => {
    const own = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    if (own === undefined || own === null) {
      if (params.global) addHook(route, root);
    } else if (typeof own === 'object') {
      addHook(route, childLimit(root, own as RateLimitOptions, route));
    } else if (own !== false) {
      throw configError('config.rateLimit', 'must be an options object or false', own);
    }
  });
}

/** The limit's hook after the route's own in its stage. */
function addHook(route: RouteOptions, limit: Limit): void {
  const stage = limit.params.hook;
  const hooks = route as unknown as Record<string, unknown>;
  const placed = hooks[stage];
  const hook = limitHandler(limit);
  hooks[stage] = Array.isArray(placed)
    ? [...placed, hook]
    : typeof placed === 'function'
      ? [placed, hook]
      : [hook];
}

/**
 * The plugin: `await fastify.register(rateLimit, { max: 100, timeWindow: '1 minute' })`. Not encapsulated (its
 * hooks and decorators reach the whole app), named '@fastify/rate-limit' so plugins depending on it find it.
 *
 * @example
 * ```ts
 * import rateLimit from 'tollgate/fastify-rate-limit';
 * await fastify.register(rateLimit, { max: 100, timeWindow: '1 minute' });
 * fastify.get('/login', { config: { rateLimit: { max: 5 } } }, handler);
 * ```
 */
export const fastifyRateLimit: FastifyPluginAsync<RateLimitPluginOptions> = unencapsulated(
  plugin,
  '@fastify/rate-limit',
  { fastify: '5.x', name: '@fastify/rate-limit' },
);

export default fastifyRateLimit;
