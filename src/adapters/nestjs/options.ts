// NestJS options and decorators: what TollgateModule registers once, and what @RateLimit sets over it per route.
import type { IncomingHttpHeaders } from 'node:http';
import { type CustomDecorator, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { configError } from '../../core/errors.js';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import type { GateOptions } from '../../gate/options.js';

/** What the guard reads of the platform's request; Express's `Request` and Fastify's `FastifyRequest` both fit. */
export interface HttpRequest {
  /** The client's address (Express: per `trust proxy`; Fastify: per `trustProxy`): the default identity. */
  readonly ip?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  /** Set by the guard for every request it counted, also a rejected one (for an exception filter to read). */
  rateLimit?: RateLimitInfo | undefined;
}

/**
 * The gate's options; `Req` is the platform's request, `Res` its response (given to `requestWasSuccessful`:
 * Express's `Response` or Fastify's `FastifyReply`). No `handler`: a rejection is a `RateLimitException`, which
 * Nest's exception filters answer, yours included.
 */
export type NestRateLimitOptions<Req = HttpRequest, Res = unknown> = GateOptions<Req, Res>;

export interface TollgateModuleOptions<Req = HttpRequest, Res = unknown>
  extends NestRateLimitOptions<Req, Res> {
  /** True: guard every route of the app (RateLimitGuard as APP_GUARD). Default false: `@UseGuards(RateLimitGuard)`. */
  readonly global?: boolean;
}

/** The metadata key of @RateLimit and @SkipRateLimit: the options of a controller or handler, or false. */
const RATE_LIMIT = Symbol('tollgate:rate-limit');

/** A route's metadata: its own options, false when it is not limited, undefined for the module's options. */
export type RouteLimit = NestRateLimitOptions<unknown> | false | undefined;

/** `[handler, controller]`, as `ExecutionContext` gives them. */
export type RouteTargets = Parameters<Reflector['getAllAndOverride']>[1];

/**
 * Limits a controller or a handler with these options over the module's; on a handler it wins over the
 * controller's. Without any limiter option (`policy`, `requestsPerMinute`, `scope`, `store`...), e.g.
 * `{ cost: 5 }`, the route spends from the module's buckets; with them it gets buckets of its own, on the
 * module's store and `failOpen`.
 *
 * @example
 * ```ts
 * @Controller('login')
 * @RateLimit({ requestsPerMinute: 5, scope: 'login' })
 * export class LoginController {}
 * ```
 */
export function RateLimit<Req = HttpRequest, Res = unknown>(
  options: NestRateLimitOptions<Req, Res>,
): CustomDecorator<symbol> {
  return SetMetadata(RATE_LIMIT, options);
}

/** Leaves a controller or a handler unlimited, without headers; a handler's @RateLimit still wins over it. */
export function SkipRateLimit(): CustomDecorator<symbol> {
  return SetMetadata(RATE_LIMIT, false);
}

/** The route's limit, from `[handler, controller]`: the handler's metadata if it has any, else the controller's. */
export function routeLimit(reflector: Reflector, targets: RouteTargets): RouteLimit {
  const limit: unknown = reflector.getAllAndOverride(RATE_LIMIT, targets);
  if (limit === undefined || limit === false) return limit;
  if (typeof limit !== 'object' || limit === null)
    throw configError('@RateLimit', 'must be given an options object', limit);
  return limit as NestRateLimitOptions<unknown>;
}
