// tollgate/nestjs on real Nest apps over loopback HTTP, the same tests on the Express and the Fastify platform.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import {
  Controller,
  type ExecutionContext,
  Get,
  type INestApplication,
  Module,
  Req,
  UseGuards,
} from '@nestjs/common';
import { APP_GUARD, HttpAdapterHost } from '@nestjs/core';
import { type HttpRequest, RateLimitGuard, TollgateModule } from '../../src/adapters/nestjs.js';
import { decorate, PLATFORMS, type Platform, start, until } from './nestjs-app.js';
import {
  fromHandler,
  ItemsController,
  LIMIT,
  LoginController,
  ReportsController,
  recordingStore,
  T0,
  TooManyFilter,
  UploadsController,
  uploads,
} from './nestjs-controllers.js';

/** An app of the test controllers, every route guarded by the module, on `platform`. */
async function appOn(platform: Platform, setup?: (app: INestApplication) => void) {
  const recording = recordingStore();
  const logger = { warn: mock.fn(), error: mock.fn() };
  class AppModule {}
  decorate(AppModule, [
    Module({
      imports: [
        TollgateModule.forRoot({ store: recording.store, requestsPerMinute: LIMIT, logger, global: true }),
      ],
      controllers: [ItemsController, LoginController, ReportsController, UploadsController],
    }),
  ]);
  const app = await start(AppModule, platform, setup);
  const call = async (path: string, method = 'GET') => {
    const response = await fetch(`${app.url}${path}`, { method, signal: AbortSignal.timeout(5000) });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
  return { ...recording, app, call, logger };
}

type Call = Awaited<ReturnType<typeof appOn>>['call'];

/** The statuses of `times` requests to `path`, one after the other. */
async function statuses(call: Call, path: string, times: number, method = 'GET'): Promise<number[]> {
  const answers = [];
  for (let i = 0; i < times; i++) answers.push((await call(path, method)).status);
  return answers;
}

/** `times` admissions answered `status`, then `thenDenied` rejections. */
const allowed = (times: number, thenDenied = 0, status = 200) => [
  ...Array(times).fill(status),
  ...Array(thenDenied).fill(429),
];

for (const platform of PLATFORMS) {
  describe(`tollgate/nestjs on ${platform.name}`, () => {
    it("limits an undecorated route with the module's options: headers, 429 body, request.rateLimit, refill", async () => {
      const { app, call, clock } = await appOn(platform);
      try {
        const first = await call('/items');
        assert.equal(first.status, 200);
        assert.equal(first.headers.get('ratelimit-limit'), String(LIMIT));
        assert.equal(first.headers.get('ratelimit-remaining'), String(LIMIT - 1));
        assert.equal(first.headers.get('retry-after'), null);
        const { decision, ...figures } = first.body.rateLimit;
        assert.deepEqual(figures, {
          limit: LIMIT,
          used: 1,
          remaining: LIMIT - 1,
          resetTime: new Date(T0 + 20_000).toISOString(),
          key: '127.0.0.1',
        });
        assert.equal(decision.allowed, true);
        assert.deepEqual(await statuses(call, '/items', LIMIT), allowed(LIMIT - 1, 1));
        const denied = await call('/items');
        assert.equal(denied.status, 429);
        assert.match(denied.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(denied.body, {
          error: 'Too Many Requests',
          message: 'Too many requests, please try again later.',
        });
        assert.equal(denied.headers.get('retry-after'), '20');
        assert.equal(denied.headers.get('ratelimit-remaining'), '0');
        clock.now += 20_000;
        assert.deepEqual(await statuses(call, '/items', 2), allowed(1, 1));
      } finally {
        await app.close();
      }
    });

    it('leaves a @SkipRateLimit handler unlimited and without headers', async () => {
      const { app, call } = await appOn(platform);
      try {
        assert.deepEqual(await statuses(call, '/items', LIMIT + 1), allowed(LIMIT, 1));
        const health = await call('/items/health');
        assert.deepEqual([health.status, health.headers.get('ratelimit-limit')], [200, null]);
        assert.deepEqual(await statuses(call, '/items/health', LIMIT), allowed(LIMIT));
      } finally {
        await app.close();
      }
    });

    it("a controller's @RateLimit has its own buckets; a handler's @RateLimit or @SkipRateLimit wins over it", async () => {
      const { app, call } = await appOn(platform);
      try {
        assert.deepEqual(await statuses(call, '/login', 3, 'POST'), allowed(2, 1, 201));
        const bulk = await call('/login/bulk');
        assert.deepEqual([bulk.status, bulk.headers.get('ratelimit-limit')], [200, '5']);
        assert.deepEqual(await statuses(call, '/login/bulk', 5), allowed(4, 1));
        assert.deepEqual(await statuses(call, '/login/open', 3), allowed(3));
        // None of it spent the module's buckets.
        assert.deepEqual(await statuses(call, '/items', LIMIT + 1), allowed(LIMIT, 1));
      } finally {
        await app.close();
      }
    });

    it("a handler's @RateLimit without limiter options spends the module's buckets, under a skipped controller", async () => {
      const { app, call } = await appOn(platform);
      try {
        const exported = await call('/reports/export');
        assert.deepEqual([exported.status, exported.headers.get('ratelimit-remaining')], [200, '1']);
        assert.equal((await call('/reports/export')).status, 429);
        assert.deepEqual(await statuses(call, '/items', 2), allowed(1, 1));
        assert.deepEqual(await statuses(call, '/reports', 2), allowed(2));
      } finally {
        await app.close();
      }
    });

    it('lets an exception filter shape the 429, the rate-limit headers kept', async () => {
      const { app, call } = await appOn(platform, (nest) =>
        nest.useGlobalFilters(new TooManyFilter(nest.get(HttpAdapterHost))),
      );
      try {
        await statuses(call, '/items', LIMIT);
        const denied = await call('/items');
        assert.equal(denied.status, 429);
        assert.deepEqual(denied.body, { slowDown: true, retryAfterMs: 20_000, remaining: 0 });
        assert.equal(denied.headers.get('retry-after'), '20');
        assert.equal(denied.headers.get('ratelimit-limit'), String(LIMIT));
      } finally {
        await app.close();
      }
    });

    it('holds a concurrency slot until the response is sent, then releases it once', async () => {
      const { app, call, counts } = await appOn(platform);
      try {
        uploads.hold();
        const first = call('/uploads');
        await until(() => uploads.inRoute === 1, 'the first upload never reached the handler');
        const second = await call('/uploads');
        assert.equal(second.status, 429);
        assert.equal(counts.releases, 0);
        uploads.letGo();
        assert.equal((await first).status, 200);
        await until(() => counts.releases === 1, 'the first upload never released its slot');
        assert.equal((await call('/uploads')).status, 200);
        await until(() => counts.releases === 2, 'the second upload never released its slot');
      } finally {
        await app.close();
      }
    });

    it('with @UseGuards instead of global: true, limits only the guarded routes', async () => {
      class GuardedController {
        list(request: HttpRequest) {
          return fromHandler(request);
        }
      }
      decorate(GuardedController, [Controller('guarded'), UseGuards(RateLimitGuard)], { list: [Get()] });
      Req()(GuardedController.prototype, 'list', 0);
      class FeatureModule {}
      decorate(FeatureModule, [Module({ controllers: [GuardedController] })]);
      const { store } = recordingStore();
      class AppModule {}
      decorate(AppModule, [
        Module({
          imports: [TollgateModule.forRoot({ store, requestsPerMinute: 1 }), FeatureModule],
          controllers: [ItemsController],
        }),
      ]);
      const app = await start(AppModule, platform);
      try {
        const guarded = await fetch(`${app.url}/guarded`);
        assert.equal((await guarded.json()).rateLimit.remaining, 0);
        assert.equal((await fetch(`${app.url}/guarded`)).status, 429);
        const items = await fetch(`${app.url}/items`);
        assert.deepEqual([items.status, items.headers.get('ratelimit-limit')], [200, null]);
      } finally {
        await app.close();
      }
    });

    it('counts a request once though the guard is bound both app-wide and by @UseGuards', async () => {
      class TwiceController {
        list(request: HttpRequest) {
          return fromHandler(request);
        }
      }
      decorate(TwiceController, [Controller('twice'), UseGuards(RateLimitGuard)], { list: [Get()] });
      Req()(TwiceController.prototype, 'list', 0);
      const { store } = recordingStore();
      class AppModule {}
      decorate(AppModule, [
        Module({
          imports: [TollgateModule.forRoot({ store, requestsPerMinute: LIMIT, global: true })],
          controllers: [TwiceController],
        }),
      ]);
      const app = await start(AppModule, platform);
      try {
        const answer = await fetch(`${app.url}/twice`);
        assert.equal(answer.headers.get('ratelimit-remaining'), String(LIMIT - 1));
        assert.equal((await answer.json()).rateLimit.remaining, LIMIT - 1);
      } finally {
        await app.close();
      }
    });

    it('takes its options from forRootAsync, with injected providers', async () => {
      const { store } = recordingStore();
      const LIMITS = Symbol('limits');
      class ConfigModule {}
      decorate(ConfigModule, [
        Module({ providers: [{ provide: LIMITS, useValue: { perMinute: 1 } }], exports: [LIMITS] }),
      ]);
      class AppModule {}
      decorate(AppModule, [
        Module({
          imports: [
            TollgateModule.forRootAsync({
              imports: [ConfigModule],
              inject: [LIMITS],
              useFactory: async (limits: { perMinute: number }) => ({
                store,
                requestsPerMinute: limits.perMinute,
              }),
              global: true,
            }),
          ],
          controllers: [ItemsController],
        }),
      ]);
      const app = await start(AppModule, platform);
      try {
        assert.equal((await fetch(`${app.url}/items`)).status, 200);
        assert.equal((await fetch(`${app.url}/items`)).status, 429);
      } finally {
        await app.close();
      }
    });

    it('counts by user when an authentication guard registered before it sets request.user', async () => {
      type UserRequest = HttpRequest & { user?: { id: string } };
      /** Stands for an app's authentication: the user is whoever the header says. */
      class AuthGuard {
        canActivate(context: ExecutionContext) {
          const request = context.switchToHttp().getRequest<UserRequest>();
          const id = request.headers['x-user'];
          if (typeof id === 'string') request.user = { id };
          return true;
        }
      }
      const { store } = recordingStore();
      const identifier = (request: UserRequest) => request.user?.id;
      class AppModule {}
      decorate(AppModule, [
        Module({
          imports: [TollgateModule.forRoot({ store, requestsPerMinute: 1, identifier })],
          controllers: [ItemsController],
          providers: [
            { provide: APP_GUARD, useClass: AuthGuard },
            { provide: APP_GUARD, useClass: RateLimitGuard },
          ],
        }),
      ]);
      const app = await start(AppModule, platform);
      const as = (user: string) => fetch(`${app.url}/items`, { headers: { 'x-user': user } });
      try {
        const alice = await as('alice');
        assert.equal((await alice.json()).rateLimit.key, 'alice');
        assert.equal((await as('alice')).status, 429);
        assert.equal((await as('bob')).status, 200);
      } finally {
        await app.close();
      }
    });
  });
}
