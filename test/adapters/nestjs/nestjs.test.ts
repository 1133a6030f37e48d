// tollgate/nestjs limits on real Nest apps over loopback HTTP, on the Express and the Fastify platform alike.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { type INestApplication, Module } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { TollgateModule } from '../../../src/adapters/nestjs/nestjs.js';
import { decorate, PLATFORMS, type Platform, start, until } from './nestjs-app.js';
import {
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
  });
}
