// The controllers, filter and store the NestJS tests run their apps with; decorators applied as functions.
import { type ArgumentsHost, Catch, Controller, type ExceptionFilter, Get, Post, Req } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import {
  type HttpRequest,
  RateLimit,
  RateLimitException,
  SkipRateLimit,
} from '../../../src/adapters/nestjs/nestjs.js';
import { concurrency } from '../../../src/policies/concurrency.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import type { Store } from '../../../src/stores/store.js';
import { decorate } from './nestjs-app.js';

export const T0 = Date.UTC(2030, 0, 1);
/** The module's default limit: 3 requests a minute, one back every 20 s. */
export const LIMIT = 3;

/** A MemoryStore on a fixed clock that counts the concurrency slots released back to it. */
export function recordingStore() {
  const clock = { now: T0 };
  const memory = new MemoryStore({ clock: () => clock.now, autoCleanup: false });
  const counts = { releases: 0, refunds: 0 };
  const store: Store = {
    evaluate: (request) => {
      // A release gives back a concurrency slot (named by its lease), a refund the units a request spent.
      if (request.action === 'refund') counts[request.lease === '' ? 'refunds' : 'releases']++;
      return memory.evaluate(request);
    },
    reset: (keys) => memory.reset(keys),
  };
  return { clock, store, counts };
}

/** What UploadsController's requests wait on, and how many of them wait. */
export const uploads = {
  inRoute: 0,
  held: Promise.resolve(),
  letGo: () => {},
  /** From now on, uploads wait in the handler until `letGo`. */
  hold(): void {
    this.held = new Promise((resolve) => (this.letGo = resolve));
  },
};

export const fromHandler = (request: HttpRequest) => ({ ok: true, rateLimit: request.rateLimit ?? null });

/** No @RateLimit: the module's options. */
export class ItemsController {
  list(request: HttpRequest) {
    return fromHandler(request);
  }
  health() {
    return { ok: true };
  }
}
decorate(ItemsController, [Controller('items')], {
  list: [Get()],
  health: [Get('health'), SkipRateLimit()],
});
Req()(ItemsController.prototype, 'list', 0);

/** Its own limit on the controller; a handler's own wins over it, also to leave one unlimited. */
export class LoginController {
  login() {
    return { ok: true };
  }
  bulk() {
    return { ok: true };
  }
  open() {
    return { ok: true };
  }
}
decorate(LoginController, [Controller('login'), RateLimit({ requestsPerMinute: 2, scope: 'login' })], {
  login: [Post()],
  bulk: [Get('bulk'), RateLimit({ requestsPerMinute: 5, scope: 'login-bulk' })],
  open: [Get('open'), SkipRateLimit()],
});

/** Unlimited but for one handler, which spends the module's buckets at 2 units a request. */
export class ReportsController {
  index() {
    return { ok: true };
  }
  export() {
    return { ok: true };
  }
}
decorate(ReportsController, [Controller('reports'), SkipRateLimit()], {
  index: [Get()],
  export: [Get('export'), RateLimit({ cost: 2 })],
});

/** One upload in flight per client; each waits in the handler until `letGo`. */
export class UploadsController {
  async upload() {
    uploads.inRoute++;
    await uploads.held;
    uploads.inRoute--;
    return { ok: true };
  }
}
decorate(
  UploadsController,
  [Controller('uploads'), RateLimit({ policy: concurrency({ max: 1, leaseMs: '1m' }), scope: 'uploads' })],
  { upload: [Get()] },
);

/** Shapes every rate-limit rejection its own way, through the platform's adapter. */
export class TooManyFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: RateLimitException, host: ArgumentsHost) {
    const http = host.switchToHttp();
    const { remaining } = http.getRequest<HttpRequest>().rateLimit ?? {};
    const body = { slowDown: true, retryAfterMs: exception.info.decision.retryAfterMs, remaining };
    this.adapterHost.httpAdapter.reply(http.getResponse(), body, exception.getStatus());
  }
}
decorate(TooManyFilter, [Catch(RateLimitException)]);
