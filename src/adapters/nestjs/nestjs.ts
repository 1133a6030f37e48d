/**
 * NestJS 12 support, on the Express and Fastify platforms: TollgateModule registers the store and default limits
 * once, RateLimitGuard enforces them, and @RateLimit / @SkipRateLimit change them per controller or handler.
 * A rejection is a RateLimitException (429 by default) for Nest's exception filters to answer, with the rate-limit
 * headers already on the response; the route reads its figures from `request.rateLimit`. GraphQL resolvers are
 * limited by their context's request, and WebSocket messages by their client's address, refused with a WsException.
 *
 * @module
 * @example
 * ```ts
 * import { Controller, Get, Module, Post } from '@nestjs/common';
 * import { RateLimit, SkipRateLimit, TollgateModule } from 'tollgate/nestjs';
 *
 * @Controller()
 * class AppController {
 *   @Get('items')
 *   items() {
 *     return { items: [] };
 *   }
 *
 *   @Post('login')
 *   @RateLimit({ requestsPerMinute: 5, scope: 'login' })
 *   login() {
 *     return { ok: true };
 *   }
 *
 *   @Get('health')
 *   @SkipRateLimit()
 *   health() {
 *     return { ok: true };
 *   }
 * }
 *
 * @Module({ imports: [TollgateModule.forRoot({ requestsPerMinute: 100, global: true })], controllers: [AppController] })
 * export class AppModule {}
 * ```
 */
export { RateLimitException, RateLimitGuard } from './guard.js';
export { TollgateModule, type TollgateModuleAsyncOptions } from './module.js';
export {
  type HttpRequest,
  type NestRateLimitOptions,
  RateLimit,
  SkipRateLimit,
  type TollgateModuleOptions,
} from './options.js';
