// A limiter's decision as a traced step: told to whoever listens on tollgate:decision, on a store that answers at
// once and on one that answers later, with the same decision as when nobody listens.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { printSteps } from '../../src/core/debug-trace.js';
import { createLimiter, MemoryStore, type Store, tokenBucket } from '../../src/index.js';

/** A MemoryStore that answers later, as a remote store would. */
function later(store: MemoryStore): Store {
  return { evaluate: async (request) => store.evaluate(request), reset: (keys) => store.reset(keys) };
}

describe('a traced decision', () => {
  const policy = tokenBucket({ capacity: 1, refillPerSecond: 1 });

  for (const [name, storeOf] of [
    ['at once', (store: MemoryStore): Store => store],
    ['later', later],
  ] as const) {
    it(`is told when it starts and ends, on a store that answers ${name}`, async () => {
      const limiter = createLimiter({ policy, store: storeOf(new MemoryStore()), scope: 'traced' });
      const lines: string[] = [];
      const stop = printSteps((line) => lines.push(line));
      try {
        assert.equal((await limiter.consume('client')).allowed, true);
        assert.equal((await limiter.consume('client')).allowed, false);
      } finally {
        stop();
      }
      assert.deepEqual(
        lines.map((line) => line.replace(/^#\d+ /, '').replace(/\d+ ms/, 'N ms')),
        [
          `limiter traced: consume 1 under key traced|client, store ${name === 'later' ? 'Object' : 'MemoryStore'}`,
          'decision: allowed, 0 of 1 left',
          `limiter traced: consume 1 under key traced|client, store ${name === 'later' ? 'Object' : 'MemoryStore'}`,
          'decision: denied by "token-bucket", retry in N ms',
        ],
      );
      assert.equal(
        (await limiter.consume('someone else')).allowed,
        true,
        'and decides as before once nobody listens',
      );
    });
  }

  it('an identifier refused is refused as untraced: a rejection, not a throw', async () => {
    for (const store of [new MemoryStore(), later(new MemoryStore())]) {
      const limiter = createLimiter({ policy, store, scope: 'refused' });
      const stop = printSteps(() => {});
      try {
        const decision = limiter.consume('');
        await assert.rejects(decision, { code: 'ERR_TOLLGATE_ARGUMENT' });
      } finally {
        stop();
      }
    }
  });

  it('is told for consumeSync too, with the decision it returns', () => {
    const limiter = createLimiter({ policy, store: new MemoryStore(), scope: 'traced-sync' });
    const lines: string[] = [];
    const stop = printSteps((line) => lines.push(line));
    const decision = limiter.consumeSync('client');
    stop();
    assert.equal(decision.allowed, true);
    assert.deepEqual(lines.length, 2);
  });

  it('refuses a store that declares itself synchronous and answers later', () => {
    const store = new MemoryStore();
    const liar: Store = {
      synchronous: true,
      evaluate: async (request) => store.evaluate(request),
      reset: () => {},
    };
    const limiter = createLimiter({
      policy: [policy, tokenBucket({ capacity: 2, refillPerSecond: 1, name: 'b' })],
      store: liar,
      scope: 'liar',
    });
    assert.throws(() => limiter.consumeSync('client'), {
      code: 'ERR_TOLLGATE_STORE',
      message: /^the store declares `synchronous` but answered with a promise/,
    });
  });
});
