// ThrottlerGuard: @nestjs/throttler's guard, each protected method overridable as there, counting through its storage.
import { createHash } from 'node:crypto';
import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  Logger,
  type OnModuleInit,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { argumentError } from '../../../core/errors.js';
import { httpParts, wsClientView, wsException } from '../contexts.js';
import { THROTTLE_KEYS } from './decorators.js';
import { ThrottlerException, throttlerMessage } from './exception.js';
import { DEFAULT_IPV6_SUBNET_PREFIX, normalizeIp } from './ip.js';
import {
  getOptionsToken,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
  type ThrottlerRequest,
} from './options.js';
import { ThrottlerStorage } from './storage.js';

// biome-ignore lint/suspicious/noExplicitAny: a request or response of any platform, as @nestjs/throttler types them.
type Loose = Record<string, any>;
type CommonOptions = Pick<
  ThrottlerOptions,
  'skipIf' | 'ignoreUserAgents' | 'getTracker' | 'generateKey' | 'setHeaders'
>;

/**
 * Limits every route it guards by each named throttler of ThrottlerModule, as @nestjs/throttler does: bind it as
 * `{ provide: APP_GUARD, useClass: ThrottlerGuard }` or with `@UseGuards(ThrottlerGuard)`, and extend it to change
 * how a request is tracked, keyed or answered. HTTP, GraphQL and WebSocket contexts are each read their own way.
 *
 * @example
 * ```ts
 * // Tracked by API key rather than by address.
 * @Injectable()
 * export class ApiKeyThrottlerGuard extends ThrottlerGuard {
 *   protected override async getTracker(req: Record<string, any>): Promise<string> {
 *     return req.headers['x-api-key'] ?? req.ip;
 *   }
 * }
 * ```
 */
export class ThrottlerGuard implements CanActivate, OnModuleInit {
  protected headerPrefix = 'X-RateLimit';
  protected logger = new Logger('ThrottlerGuard');
  protected errorMessage = throttlerMessage;
  protected throttlers: ThrottlerOptions[] = [];
  protected commonOptions: CommonOptions = {};
  protected ipv6SubnetPrefix = DEFAULT_IPV6_SUBNET_PREFIX;
  protected readonly options: ThrottlerModuleOptions;
  protected readonly storageService: ThrottlerStorage;
  protected readonly reflector: Reflector;

  constructor(options: ThrottlerModuleOptions, storageService: ThrottlerStorage, reflector: Reflector) {
    this.options = options;
    this.storageService = storageService;
    this.reflector = reflector;
  }

  async onModuleInit(): Promise<void> {
    const options = this.options;
    const list = Array.isArray(options) ? options : options.throttlers;
    // The shortest ttl first, throttlers whose ttl is a function last: the order headers and checks go in.
    this.throttlers = [...list]
      .sort((first, second) => {
        if (typeof first.ttl === 'function') return 1;
        if (typeof second.ttl === 'function') return 0;
        return first.ttl - second.ttl;
      })
      .map((throttler) => ({ ...throttler, name: throttler.name ?? 'default' }));
    if (this.throttlers.length === 0)
      this.logger.warn(
        'No throttlers are configured, so no request is limited. Provide at least one entry to ' +
          'ThrottlerModule.forRoot() or return one from ThrottlerModule.forRootAsync().',
      );
    if (Array.isArray(options)) this.commonOptions = {};
    else {
      const { skipIf, ignoreUserAgents, getTracker, generateKey, setHeaders } = options;
      this.commonOptions = { skipIf, ignoreUserAgents, getTracker, generateKey, setHeaders } as CommonOptions;
      this.ipv6SubnetPrefix = options.ipv6SubnetPrefix ?? DEFAULT_IPV6_SUBNET_PREFIX;
    }
    this.commonOptions.getTracker ??= this.getTracker.bind(this);
    this.commonOptions.generateKey ??= this.generateKey.bind(this);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (await this.shouldSkip(context)) return true;
    const targets = [context.getHandler(), context.getClass()];
    const routeOr = <T>(key: string, name: string): T | undefined =>
      this.reflector.getAllAndOverride<T | undefined>(key + name, targets);
    const continues: boolean[] = [];
    for (const throttler of this.throttlers) {
      const name = throttler.name as string;
      const skipIf = throttler.skipIf || this.commonOptions.skipIf;
      if (routeOr<boolean>(THROTTLE_KEYS.skip, name) || skipIf?.(context)) {
        continues.push(true);
        continue;
      }
      const figure = async (field: 'limit' | 'ttl' | 'blockDuration', fallback?: number) =>
        toNumber(
          await resolve(context, routeOr(THROTTLE_KEYS[field], name) ?? throttler[field] ?? fallback),
          field,
          name,
        );
      const limit = await figure('limit');
      const ttl = await figure('ttl');
      // A block lasts a window unless said otherwise.
      const blockDuration = await figure('blockDuration', ttl);
      const getTracker =
        routeOr<CommonOptions['getTracker']>(THROTTLE_KEYS.getTracker, name) ||
        throttler.getTracker ||
        this.commonOptions.getTracker;
      const generateKey =
        routeOr<CommonOptions['generateKey']>(THROTTLE_KEYS.generateKey, name) ||
        throttler.generateKey ||
        this.commonOptions.generateKey;
      continues.push(
        await this.handleRequest({
          context,
          limit,
          ttl,
          throttler,
          blockDuration,
          getTracker: getTracker as ThrottlerRequest['getTracker'],
          generateKey: generateKey as ThrottlerRequest['generateKey'],
        }),
      );
    }
    return continues.every((goes) => goes);
  }

  /** True: the request goes through every throttler unchecked. Override it for a rule of your own. */
  protected async shouldSkip(_context: ExecutionContext): Promise<boolean> {
    return false;
  }

  /** One throttler's check: counts the request, sets its headers, and throws when it is blocked. */
  protected async handleRequest(requestProps: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = requestProps;
    const { req, res } = this.getRequestResponse(context);
    const ignoreUserAgents = throttler.ignoreUserAgents ?? this.commonOptions.ignoreUserAgents;
    if (Array.isArray(ignoreUserAgents)) {
      for (const pattern of ignoreUserAgents) if (pattern.test(req.headers?.['user-agent'])) return true;
    }
    const tracker = await getTracker(req, context);
    const name = throttler.name as string;
    const key = generateKey(context, tracker, name);
    const record = await this.storageService.increment(key, ttl, limit, blockDuration, name);
    const suffix = name === 'default' ? '' : `-${name}`;
    const setHeaders = throttler.setHeaders ?? this.commonOptions.setHeaders ?? true;
    if (record.isBlocked) {
      if (setHeaders) this.setResponseHeader(res, `Retry-After${suffix}`, record.timeToBlockExpire);
      await this.throwThrottlingException(context, { limit, ttl, key, tracker, ...record });
    }
    if (setHeaders) {
      this.setResponseHeader(res, `${this.headerPrefix}-Limit${suffix}`, limit);
      this.setResponseHeader(
        res,
        `${this.headerPrefix}-Remaining${suffix}`,
        Math.max(0, limit - record.totalHits),
      );
      this.setResponseHeader(res, `${this.headerPrefix}-Reset${suffix}`, record.timeToExpire);
    }
    return true;
  }

  /** Who a request counts for: its client address (IPv6 by network prefix). */
  protected async getTracker(req: Loose): Promise<string> {
    return normalizeIp(req.ip, this.ipv6SubnetPrefix);
  }

  /** Express's `res.header`, Fastify's `reply.header`, node:http's `setHeader`; nothing where there is none. */
  protected setResponseHeader(res: Loose, name: string, value: string | number): void {
    if (typeof res.header === 'function') res.header(name, value);
    else if (typeof res.setHeader === 'function') res.setHeader(name, value);
  }

  /**
   * HTTP: the platform's request and response; GraphQL: its context's `req` and `res` (Fastify: `reply`);
   * WebSocket: the client socket, as @nestjs/throttler gives it, seen with an `ip` and handshake `headers` of its
   * own where it has none, and no response.
   */
  protected getRequestResponse(context: ExecutionContext): { req: Loose; res: Loose } {
    if (context.getType<string>() === 'ws') return { req: wsClientView(context), res: {} };
    const parts = httpParts(context);
    if (parts === undefined) {
      const http = context.switchToHttp();
      return { req: http.getRequest(), res: http.getResponse() };
    }
    return { req: (parts.request ?? {}) as Loose, res: (parts.response ?? {}) as Loose };
  }

  /** The storage key: the route, the throttler and the tracker, hashed. */
  protected generateKey(context: ExecutionContext, suffix: string, name: string): string {
    const prefix = `${context.getClass().name}-${context.getHandler().name}-${name}`;
    return createHash('sha256').update(`${prefix}-${suffix}`).digest('hex');
  }

  /** A ThrottlerException (429), or for a WebSocket message an exception the gateway sends its client. */
  protected async throwThrottlingException(
    context: ExecutionContext,
    throttlerLimitDetail: ThrottlerLimitDetail,
  ): Promise<void> {
    const message = await this.getErrorMessage(context, throttlerLimitDetail);
    if (context.getType<string>() === 'ws') throw wsException(message || throttlerMessage);
    throw new ThrottlerException(message);
  }

  /** The options' `errorMessage` (a string, or a function of the request), else `ThrottlerException: Too Many Requests`. */
  protected async getErrorMessage(
    context: ExecutionContext,
    throttlerLimitDetail: ThrottlerLimitDetail,
  ): Promise<string> {
    if (Array.isArray(this.options) || !this.options.errorMessage) return this.errorMessage;
    const { errorMessage } = this.options;
    return typeof errorMessage === 'function' ? errorMessage(context, throttlerLimitDetail) : errorMessage;
  }
}

Injectable()(ThrottlerGuard);
Inject(getOptionsToken())(ThrottlerGuard, undefined, 0);
Inject(ThrottlerStorage)(ThrottlerGuard, undefined, 1);
Inject(Reflector)(ThrottlerGuard, undefined, 2);

async function resolve(context: ExecutionContext, value: unknown): Promise<unknown> {
  return typeof value === 'function' ? value(context) : value;
}

/** A figure as a number (numeric text too); anything else fails the request, naming the throttler. */
function toNumber(value: unknown, option: string, throttler: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || Number.isNaN(number))
    throw argumentError(
      `Invalid "${option}" for the "${throttler}" throttler: expected a number, got ${JSON.stringify(value)}.`,
    );
  return number;
}
