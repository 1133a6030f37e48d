// The Fastify plugin's options in each place they are given (plugin, route config, the decorator), checked at wire-up.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { configError } from '../../core/errors.js';
import { oneOf } from '../../core/validate.js';
import type { Decision } from '../../decision/decision.js';
import { type GateOptions, overApp } from '../../gate/options.js';
import type { Limiter } from '../../limiter/limiter.js';

/** The request lifecycle hooks a limit can run in. */
export type FastifyLimitStage = 'onRequest' | 'preHandler';

/** What `fastify.rateLimit(options)` takes: one limit's options, wherever its hook is placed. */
export interface FastifyRateLimitHookOptions extends GateOptions<FastifyRequest, FastifyReply> {
  /**
   * Answers a rejected request yourself: send with `reply`, or return the body to send. Status and headers are
   * already set.
   */
  readonly handler?: (request: FastifyRequest, reply: FastifyReply, decision: Decision) => unknown;
  /**
   * Throw a rejection, a `RateLimitError` with its `statusCode`, for Fastify's error handler (`setErrorHandler`) to
   * answer, instead of answering it here. The rate-limit headers are already on the reply. Default false.
   */
  readonly throw?: boolean;
  /** Called on each counted request within the limit, with the identity it was counted under. */
  readonly onExceeding?: (request: FastifyRequest, key: string) => void;
  /** Called on each counted request over the limit (shadow mode's let through too), with its identity. */
  readonly onExceeded?: (request: FastifyRequest, key: string) => void;
}

/** A route's `config.rateLimit`: a limit's options, and the hook it runs in (default: the plugin's). */
export interface FastifyRouteRateLimitOptions extends FastifyRateLimitHookOptions {
  /** 'onRequest' (default), or 'preHandler' to key requests by what earlier hooks (authentication) set. */
  readonly hook?: FastifyLimitStage;
}

/** The plugin's options: `app.register(rateLimit, options)`. */
export interface FastifyRateLimitOptions extends FastifyRouteRateLimitOptions {
  /** False limits only the routes that ask: a `config.rateLimit` object or their own `fastify.rateLimit()` hook. */
  readonly global?: boolean;
}

/** Options of a limit's gate beside the gate's own, in every place. */
export const HOOK_OPTIONS: readonly string[] = ['handler', 'throw', 'onExceeding', 'onExceeded'];

/** The plugin's options, split into where its limits run and the options of its app-wide limit. */
export interface PluginPlan {
  readonly global: boolean;
  readonly stage: FastifyLimitStage;
  readonly limit: FastifyRateLimitHookOptions;
}

export function pluginPlan(options: FastifyRateLimitOptions): PluginPlan {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  const { global = true, hook, ...limit } = options;
  if (typeof global !== 'boolean') throw configError('global', 'must be a boolean', global);
  return { global, stage: stageOf(hook, 'onRequest'), limit };
}

/** A route's `config.rateLimit` object: the stage it runs in, and its options over the plugin's. */
export function routePlan(
  plugin: PluginPlan,
  config: unknown,
  shared: Limiter,
): { stage: FastifyLimitStage; limit: FastifyRateLimitHookOptions } {
  if (typeof config !== 'object' || config === null)
    throw configError('config.rateLimit', 'must be an options object or false', config);
  const { hook, ...route } = config as FastifyRateLimitOptions;
  if ('global' in route)
    throw configError('global', 'is an option of the plugin, not of a route: use `config.rateLimit: false`');
  return { stage: stageOf(hook, plugin.stage), limit: overApp(plugin.limit, route, shared) };
}

/** The options of a `fastify.rateLimit()` hook over the plugin's; where it runs is where it is placed. */
export function decoratorPlan(
  plugin: PluginPlan,
  options: unknown,
  shared: Limiter,
): FastifyRateLimitHookOptions {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  for (const option of ['hook', 'global'])
    if (option in options)
      throw configError(
        option,
        'is not an option of fastify.rateLimit(): the route places the hook it returns',
      );
  return overApp(plugin.limit, options, shared);
}

function stageOf(hook: unknown, fallback: FastifyLimitStage): FastifyLimitStage {
  return hook === undefined ? fallback : oneOf('hook', hook, ['onRequest', 'preHandler'] as const);
}
