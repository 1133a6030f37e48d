// The decision engine when the store fails (each rule's fail mode answers), and what it refuses to decide at all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDecider } from '../../../src/service/engine/decider.js';
import { Code, type RateLimitRequest, Unit } from '../../../src/service/protocol/messages.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import type { Store, StoreRequest } from '../../../src/stores/store.js';
import { headersOf, recorder, T0 } from './engine-harness.js';
import { descriptor, limitRule, stubConfig } from './stub-config.js';

/** A MemoryStore that rejects every call while `broken` is set. */
function breakableStore(clock: () => number): { store: Store; state: { broken: boolean } } {
  const inner = new MemoryStore({ clock, autoCleanup: false });
  const state = { broken: false };
  const store: Store = {
    evaluate: (request: StoreRequest) => {
      if (state.broken) return Promise.reject(new Error('connection refused'));
      return inner.evaluate(request);
    },
    reset: (keys) => inner.reset(keys),
  };
  return { store, state };
}

const config = stubConfig('domain', {
  'open=1': limitRule('open1', { requestsPerUnit: 2, unit: Unit.MINUTE, failMode: 'open' }),
  'closed=1': limitRule('closed1', { requestsPerUnit: 2, unit: Unit.MINUTE, failMode: 'closed' }),
  'memory=1': limitRule('memory1', { requestsPerUnit: 2, unit: Unit.MINUTE, failMode: 'memory' }),
  'none=1': limitRule('none1', { requestsPerUnit: 2, unit: Unit.MINUTE }),
});

const request = (...entries: string[]): RateLimitRequest => ({
  domain: 'domain',
  descriptors: entries.map((e) => descriptor(e)),
  hitsAddend: 0,
});

describe('the decision engine on a failing store', () => {
  const clock = () => T0 + 2000;

  it("answers with each rule's fail mode, once counted as a store error per request", async () => {
    const { store, state } = breakableStore(clock);
    const observer = recorder();
    const decider = createDecider({
      store,
      fallbackStore: new MemoryStore({ clock, autoCleanup: false }),
      observer,
    });
    state.broken = true;
    const response = await decider.shouldRateLimit(config, request('open=1', 'closed=1', 'memory=1'));
    assert.equal(response.overallCode, Code.OVER_LIMIT);
    assert.deepEqual(
      response.statuses.map((s) => [s.code, s.limitRemaining]),
      [
        [Code.OK, 0],
        [Code.OVER_LIMIT, 0],
        [Code.OK, 1],
      ],
    );
    assert.equal(headersOf(response)['Retry-After'], '1');
    assert.equal(observer.storeErrors, 1);
    assert.deepEqual(
      observer.outcomes.map((o) => o.level),
      ['within', 'over', 'within'],
    );
  });

  it('counts a memory fail mode in the fallback store while the store is down, and in the store once back', async () => {
    const { store, state } = breakableStore(clock);
    const decider = createDecider({ store, fallbackStore: new MemoryStore({ clock, autoCleanup: false }) });
    const remaining = async () =>
      (await decider.shouldRateLimit(config, request('memory=1'))).statuses[0]?.limitRemaining;
    assert.equal(await remaining(), 1);
    state.broken = true;
    assert.equal(await remaining(), 1, 'the fallback counts from its own zero');
    assert.equal(await remaining(), 0);
    const over = await decider.shouldRateLimit(config, request('memory=1'));
    assert.equal(over.overallCode, Code.OVER_LIMIT);
    state.broken = false;
    assert.equal(await remaining(), 0, 'the store kept its own count');
  });

  it('rejects with a store error when no fail mode answers (the gRPC layer says UNAVAILABLE)', async () => {
    const { store, state } = breakableStore(clock);
    state.broken = true;
    const decider = createDecider({ store });
    for (const entries of ['none=1', 'memory=1']) {
      await assert.rejects(
        decider.shouldRateLimit(config, request(entries)),
        (error: Error & { code?: string }) => {
          assert.equal(
            error.code,
            'ERR_TOLLGATE_STORE',
            `${entries}: without a fallback store, memory is no fail mode`,
          );
          return true;
        },
      );
    }
  });

  it('refuses a malformed request with an argument error (INVALID_ARGUMENT), counting nothing', async () => {
    const { store } = breakableStore(clock);
    const decider = createDecider({ store });
    const malformed: RateLimitRequest[] = [
      { domain: '', descriptors: [descriptor('open=1')], hitsAddend: 0 },
      { domain: 'domain', descriptors: [], hitsAddend: 0 },
      { domain: 'domain', descriptors: [descriptor('open=1'), { entries: [] }], hitsAddend: 0 },
      { domain: 'domain', descriptors: [{ entries: [{ key: '', value: 'v' }] }], hitsAddend: 0 },
      { domain: 'domain', descriptors: [descriptor('open=1')], hitsAddend: -1 },
      { domain: 'domain', descriptors: [descriptor('open=1', 1.5)], hitsAddend: 0 },
    ];
    for (const bad of malformed) {
      await assert.rejects(decider.shouldRateLimit(config, bad), { code: 'ERR_TOLLGATE_ARGUMENT' });
    }
    const fresh = await decider.shouldRateLimit(config, request('open=1'));
    assert.equal(fresh.statuses[0]?.limitRemaining, 1, 'nothing was counted before the refusals');
  });

  it('lets an argument error pass through a fail mode, told by its code even from another copy of the library', async () => {
    const refusing: Store = {
      evaluate: () =>
        Promise.reject(Object.assign(new Error('cost is too large'), { code: 'ERR_TOLLGATE_ARGUMENT' })),
      reset: async () => {},
    };
    const decider = createDecider({ store: refusing });
    await assert.rejects(decider.shouldRateLimit(config, request('open=1')), {
      code: 'ERR_TOLLGATE_ARGUMENT',
      message: 'cost is too large',
    });
  });

  it('checks its options once, naming the one at fault', () => {
    assert.throws(() => createDecider({} as never), { code: 'ERR_TOLLGATE_CONFIG', option: 'store' });
    const store = new MemoryStore({ autoCleanup: false });
    assert.throws(() => createDecider({ store, fallbackStore: {} as never }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'fallbackStore',
    });
  });
});
