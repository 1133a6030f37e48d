// ThrottlerModule's wire-up: the async forms, what the storage token gives, and the options refused at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Injectable, type Type } from '@nestjs/common';
import {
  getOptionsToken,
  getStorageToken,
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  StoreThrottlerStorage,
  ThrottlerModule,
  type ThrottlerModuleOptions,
  ThrottlerStorageService,
} from '../../../src/adapters/nestjs/throttler/index.js';
import { TollgateError } from '../../../src/core/errors.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { create, PLATFORMS, type Platform } from './nestjs-app.js';

const THROTTLERS = [{ ttl: 1000, limit: 1 }];

/** A provider that injects both, as an app's own guard or service would. */
class Probe {
  constructor(
    readonly options: ThrottlerModuleOptions,
    readonly storage: unknown,
  ) {}
}
Injectable()(Probe);
InjectThrottlerOptions()(Probe, undefined, 0);
InjectThrottlerStorage()(Probe, undefined, 1);

class Factory {
  createThrottlerOptions() {
    return THROTTLERS;
  }
}
Injectable()(Factory);

async function probe(imported: unknown): Promise<Probe> {
  class AppModule {}
  Reflect.defineMetadata('imports', [imported], AppModule);
  Reflect.defineMetadata('providers', [Probe], AppModule);
  const app = await create(AppModule as Type, PLATFORMS[0] as Platform);
  await app.init();
  const found = app.get(Probe);
  assert.equal(app.get(getOptionsToken()), found.options);
  assert.equal(app.get(getStorageToken()), found.storage);
  await app.close();
  return found;
}

describe('ThrottlerModule', () => {
  it('makes its options with useFactory, useClass or useExisting', async () => {
    const factory = await probe(ThrottlerModule.forRootAsync({ useFactory: async () => THROTTLERS }));
    assert.deepEqual(factory.options, THROTTLERS);
    const byClass = await probe(ThrottlerModule.forRootAsync({ useClass: Factory }));
    assert.deepEqual(byClass.options, THROTTLERS);
    assert.ok(byClass.storage instanceof ThrottlerStorageService);
    class FactoryModule {}
    Reflect.defineMetadata('providers', [Factory], FactoryModule);
    Reflect.defineMetadata('exports', [Factory], FactoryModule);
    const existing = await probe(
      ThrottlerModule.forRootAsync({ imports: [FactoryModule], useExisting: Factory }),
    );
    assert.deepEqual(existing.options, THROTTLERS);
  });

  it('wraps a Tollgate store given as storage, and keeps a ThrottlerStorage of its own as it is', async () => {
    const store = new MemoryStore({ autoCleanup: false });
    const wrapped = await probe(ThrottlerModule.forRoot({ throttlers: THROTTLERS, storage: store }));
    assert.ok(wrapped.storage instanceof StoreThrottlerStorage);
    assert.equal((wrapped.storage as StoreThrottlerStorage).store, store);
    const own = {
      increment: async () => ({ totalHits: 1, timeToExpire: 1, isBlocked: false, timeToBlockExpire: 0 }),
    };
    assert.equal(
      (await probe(ThrottlerModule.forRoot({ throttlers: THROTTLERS, storage: own }))).storage,
      own,
    );
  });

  it('refuses options it cannot use, naming them', async () => {
    const refused = (option: string) => (error: unknown) =>
      error instanceof TollgateError && error.code === 'ERR_TOLLGATE_CONFIG' && error.option === option;
    assert.throws(() => ThrottlerModule.forRoot({} as never), refused('throttlers'));
    assert.throws(
      () => ThrottlerModule.forRoot({ throttlers: [], storage: { get: () => 1 } } as never),
      refused('storage'),
    );
    assert.throws(() => ThrottlerModule.forRootAsync({}), refused('useFactory'));
    assert.throws(() => ThrottlerModule.forRoot([{ name: 'short', ttl: 0, limit: 1 }]), refused('ttl'));
    assert.throws(() => ThrottlerModule.forRoot([{ name: 'short', ttl: 0, limit: 1 }]), /"short" throttler/);
    assert.throws(() => ThrottlerModule.forRoot([{ ttl: 2 ** 39, limit: 1 }]), refused('ttl'));
    assert.throws(() => ThrottlerModule.forRoot([{ ttl: 1000, limit: 2 ** 24 }]), refused('limit'));
    assert.throws(() => ThrottlerModule.forRoot([{ ttl: 1000, limit: 1.5 }]), refused('limit'));
    assert.throws(
      () => ThrottlerModule.forRoot({ throttlers: [{ ttl: 1000, limit: 1, blockDuration: 2 ** 39 }] }),
      refused('blockDuration'),
    );
    await assert.rejects(
      probe(ThrottlerModule.forRootAsync({ useFactory: () => ({}) as never })),
      refused('throttlers'),
    );
    await assert.rejects(
      probe(ThrottlerModule.forRootAsync({ useFactory: () => [{ ttl: '0', limit: 1 }] as never })),
      refused('ttl'),
    );
  });

  it('leaves figures to a storage of the app’s own, and a figure given as a function to its request', () => {
    const own = {
      increment: async () => ({ totalHits: 1, timeToExpire: 1, isBlocked: false, timeToBlockExpire: 0 }),
    };
    ThrottlerModule.forRoot({ throttlers: [{ ttl: 0, limit: 2 ** 30 }], storage: own });
    ThrottlerModule.forRoot([{ ttl: () => 0, limit: () => 1.5 }]);
    ThrottlerModule.forRoot([{ ttl: 1500.5, limit: 1, blockDuration: -1 }]);
  });
});
