// How tollgate/nestjs is bound and configured (@UseGuards, twice, forRootAsync, after an auth guard), on each platform.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller, type ExecutionContext, Get, Module, Req, UseGuards } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { type HttpRequest, RateLimitGuard, TollgateModule } from '../../../src/adapters/nestjs/nestjs.js';
import { decorate, PLATFORMS, start } from './nestjs-app.js';
import { fromHandler, ItemsController, LIMIT, recordingStore } from './nestjs-controllers.js';

for (const platform of PLATFORMS) {
  describe(`tollgate/nestjs binding on ${platform.name}`, () => {
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
