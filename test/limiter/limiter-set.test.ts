// The drop-ins' limiters per set of figures, and the keys of other libraries as Tollgate identifiers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLimiter, fixedWindow, MemoryStore } from '../../src/index.js';
import { foreignKey, LimiterSet } from '../../src/limiter/limiter-set.js';

describe('LimiterSet', () => {
  const store = new MemoryStore();
  const make = (limit: number) => () =>
    createLimiter({ policy: fixedWindow({ limit, windowMs: 1000 }), store });

  it('makes a limiter once per figures and gives the same one after', () => {
    const set = new LimiterSet();
    let made = 0;
    const counted = (limit: number) => () => {
      made += 1;
      return make(limit)();
    };
    const first = set.for('1000 5', counted(5));
    assert.equal(set.for('1000 5', counted(5)), first);
    assert.notEqual(set.for('1000 6', counted(6)), first);
    assert.equal(made, 2);
  });

  it('starts again past its bound, so figures from a function of the request cannot grow it without end', () => {
    const set = new LimiterSet(2);
    const first = set.for('a', make(1));
    set.for('b', make(2));
    set.for('c', make(3));
    assert.notEqual(set.for('a', make(1)), first, 'the set was cleared when the third figures came');
  });
});

describe('foreignKey', () => {
  it('counts a number as its digits and the empty key as a key of its own', async () => {
    assert.equal(foreignKey(42), '42');
    assert.equal(foreignKey('1.2.3.4'), '1.2.3.4');
    assert.notEqual(foreignKey(''), '');
    const limiter = createLimiter({
      policy: fixedWindow({ limit: 1, windowMs: 1000 }),
      store: new MemoryStore(),
    });
    assert.equal((await limiter.consume(foreignKey(''))).allowed, true);
    assert.equal((await limiter.consume(foreignKey(''))).allowed, false);
    assert.equal((await limiter.consume(foreignKey(' '))).allowed, true, 'a space is another key');
  });
});
