// tollgate/nestjs wire-up: options refused at once or when the app starts, and the guard outside Nest's HTTP.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { Controller, type ExecutionContext, Get, Module } from '@nestjs/common';
import { DiscoveryService, type HttpAdapterHost, ModulesContainer, Reflector } from '@nestjs/core';
import { RateLimitGates } from '../../../src/adapters/nestjs/gates.js';
import {
  type NestRateLimitOptions,
  RateLimit,
  RateLimitException,
  RateLimitGuard,
  TollgateModule,
} from '../../../src/adapters/nestjs/nestjs.js';
import { TollgateError } from '../../../src/core/errors.js';
import { concurrency } from '../../../src/policies/concurrency.js';
import { tokenBucket } from '../../../src/policies/token-bucket.js';
import { create, decorate, PLATFORMS, until } from './nestjs-app.js';
import { ItemsController, recordingStore } from './nestjs-controllers.js';

for (const platform of PLATFORMS) {
  describe(`tollgate/nestjs wire-up on ${platform.name}`, () => {
    it("fails the app's start on a bad option, naming it and the @RateLimit that holds it", async () => {
      class TypoController {
        list() {
          return {};
        }
      }
      decorate(TypoController, [Controller('typo')], {
        list: [Get(), RateLimit({ requestsPerMinut: 5 } as never)],
      });
      const appWith = (options: object, controllers: (new () => unknown)[]) => {
        class AppModule {}
        const { store } = recordingStore();
        const imports = [TollgateModule.forRoot({ store, ...options })];
        return decorate(AppModule, [Module({ imports, controllers })]);
      };
      const refused = (option: string, where: RegExp) => (error: unknown) =>
        error instanceof TollgateError &&
        error.code === 'ERR_TOLLGATE_CONFIG' &&
        error.option === option &&
        where.test(error.message);
      // A route's options when the app starts, the module's as soon as it is created.
      const app = await create(appWith({}, [TypoController]), platform);
      try {
        await assert.rejects(app.init(), refused('requestsPerMinut', /@RateLimit on TypoController\.list/));
      } finally {
        await app.close();
      }
      await assert.rejects(
        create(appWith({ statusCode: 200 }, [ItemsController]), platform),
        refused('statusCode', /HTTP error status/),
      );
    });
  });
}

describe('tollgate/nestjs wire-up', () => {
  it('refuses malformed module options at once', () => {
    const refused = (option: string) => (error: unknown) =>
      error instanceof TollgateError && error.code === 'ERR_TOLLGATE_CONFIG' && error.option === option;
    assert.throws(() => TollgateModule.forRoot({ global: 'yes' as never }), refused('global'));
    assert.throws(() => TollgateModule.forRoot(null as never), refused('options'));
    assert.throws(() => TollgateModule.forRootAsync({ useFactory: 5 as never }), refused('useFactory'));
    assert.throws(
      () => TollgateModule.forRootAsync({ useFactory: () => ({}), useClass: 1 } as never),
      refused('useClass'),
    );
  });
});

describe('RateLimitGuard outside the Express and Fastify platforms', () => {
  class Handlers {
    upload() {}
  }
  /** A guard on `options`, and an execution context of `type` whose response is no node:http response. */
  function guarded(type: string, limit: Pick<NestRateLimitOptions, 'policy' | 'skipFailedRequests'> = {}) {
    const { store, counts } = recordingStore();
    const logger = { warn: mock.fn(), error: mock.fn() };
    const options = { policy: concurrency({ max: 1, leaseMs: '1m' }), store, logger, ...limit };
    const gates = new RateLimitGates(options, new Reflector(), new DiscoveryService(new ModulesContainer()));
    const setHeader = mock.fn();
    const guard = new RateLimitGuard(gates, { httpAdapter: { setHeader } } as unknown as HttpAdapterHost);
    const context = {
      getType: () => type,
      getHandler: () => Handlers.prototype.upload,
      getClass: () => Handlers,
      switchToHttp: () => ({ getRequest: () => ({ ip: '127.0.0.1', headers: {} }), getResponse: () => ({}) }),
    } as unknown as ExecutionContext;
    return { guard, context, counts, logger, setHeader };
  }

  it('lets a microservice context through uncounted', async () => {
    const { guard, context, counts, setHeader } = guarded('rpc');
    assert.equal(await guard.canActivate(context), true);
    assert.deepEqual([counts.releases, setHeader.mock.callCount()], [0, 0]);
  });

  it('frees a concurrency slot at once when there is no node:http response to watch, warning once', async () => {
    const { guard, context, counts, logger, setHeader } = guarded('http');
    assert.equal(await guard.canActivate(context), true);
    assert.equal(await guard.canActivate(context), true);
    await until(() => counts.releases === 2, 'the slots were not freed');
    assert.equal(logger.warn.mock.callCount(), 1);
    assert.ok(setHeader.mock.callCount() > 0);
  });

  it('refunds nothing there, as no response says how a request went: skipFailedRequests leaves the limit whole', async () => {
    const policy = [concurrency({ max: 1, leaseMs: '1m' }), tokenBucket({ capacity: 2, refillPerSecond: 0 })];
    const { guard, context, counts, logger } = guarded('http', { policy, skipFailedRequests: true });
    assert.equal(await guard.canActivate(context), true);
    await until(() => counts.releases === 1, 'the slot was not freed');
    assert.equal(await guard.canActivate(context), true);
    await until(() => counts.releases === 2, 'the slot was not freed');
    await assert.rejects(guard.canActivate(context), RateLimitException);
    assert.equal(counts.refunds, 0);
    assert.match(String(logger.warn.mock.calls[0]?.arguments[0]), /no request is refunded/);
  });
});
