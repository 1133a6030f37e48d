// Fastify 5 plugin: one app-wide onRequest hook, with per-route overrides read from route `config.rateLimit`.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Decision } from '../decision.js';
import { configError } from '../errors.js';
import { createGate } from '../gate.js';
import { whenSent } from '../gate-completion.js';
import { type GateOptions, LIMITER_OPTIONS } from '../gate-options.js';
import type { Limiter } from '../limiter.js';
import { optionalFunction } from '../validate.js';

export interface FastifyRateLimitOptions extends GateOptions<FastifyRequest, FastifyReply> {
  /**
   * Answers a rejected request yourself: send with `reply`, or return the body to send. Status and headers are
   * already set.
   */
  readonly handler?: (request: FastifyRequest, reply: FastifyReply, decision: Decision) => unknown;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Options over the plugin's for this route, or `false` to leave it unlimited. */
    rateLimit?: FastifyRateLimitOptions | false;
  }
}

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>;

const plugin: FastifyPluginAsync<FastifyRateLimitOptions> = async (fastify, options) => {
  const appWide = limitHook(options);
  const routes = new WeakMap<FastifyRateLimitOptions, Hook>();
  const hookFor = (config: FastifyRateLimitOptions | false | undefined): Hook | undefined => {
    if (config === undefined) return appWide.hook;
    if (config === false) return undefined;
    if (typeof config !== 'object' || config === null)
      throw configError('config.rateLimit', 'must be an options object or false', config);
    let hook = routes.get(config);
    if (hook === undefined) {
      hook = limitHook(routeOptions(options, config, appWide.limiter)).hook;
      routes.set(config, hook);
    }
    return hook;
  };
  // Building a route's gate as the route is declared reports a bad route config at start-up; a route declared
  // before this plugin loaded (no `await` on register) gets its gate on its first request instead.
  fastify.addHook('onRoute', (route) => void hookFor(route.config?.rateLimit));
  // One app-wide hook rather than one per route, so routes declared before the plugin and 404s are limited too.
  fastify.addHook('onRequest', async (request, reply) =>
    hookFor(request.routeOptions.config.rateLimit)?.(request, reply),
  );
};

/** The plugin: `app.register(rateLimit, options)`. It is not encapsulated, so it limits the whole app. */
export const rateLimit: FastifyPluginAsync<FastifyRateLimitOptions> = Object.assign(plugin, {
  // What fastify-plugin sets, without making it a runtime dependency: skip encapsulation, name the plugin.
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'tollgate',
});

function limitHook(options: FastifyRateLimitOptions): { limiter: Limiter; hook: Hook } {
  const gate = createGate<FastifyRequest, FastifyReply>(options, {
    name: 'rateLimit',
    identifier: (request) => request.ip,
    options: ['handler'],
  });
  const handler = optionalFunction('handler', options.handler);
  const hook: Hook = async (request, reply) => {
    const outcome = await gate.check(request);
    if (outcome.action === 'fail') return reply.code(outcome.status).send(outcome.body);
    reply.headers(outcome.headers);
    if (outcome.action === 'next') {
      const { complete } = outcome;
      // The raw response's events, not onResponse: that hook never runs for a client that left mid-response.
      if (complete !== undefined) whenSent(reply.raw, (status) => complete(status, reply));
      return undefined;
    }
    reply.code(outcome.status);
    const body = handler === undefined ? outcome.body : await handler(request, reply, outcome.decision);
    // An async hook must send and return the reply to stop the request here.
    return reply.sent ? reply : reply.send(body);
  };
  return { limiter: gate.limiter, hook };
}

/**
 * A route's options over the plugin's. Without limiter options of its own the route spends from the plugin's
 * limiter; with them it gets its own limiter (and buckets), still on the plugin's store and fail mode.
 */
function routeOptions(
  pluginOptions: FastifyRateLimitOptions,
  route: FastifyRateLimitOptions,
  shared: Limiter,
): FastifyRateLimitOptions {
  const { limiter, policy, requestsPerMinute, capacity, scope, store, failOpen, blockMs, ...perRequest } =
    pluginOptions;
  // A route that sets none of the limiter's options (nor a limiter) shares the plugin's buckets.
  if (route.limiter === undefined && !LIMITER_OPTIONS.some((option) => route[option] !== undefined))
    return { ...perRequest, ...route, limiter: shared };
  if (route.limiter !== undefined) return { ...perRequest, ...route };
  return { ...perRequest, store: shared.store, ...(failOpen === undefined ? {} : { failOpen }), ...route };
}
