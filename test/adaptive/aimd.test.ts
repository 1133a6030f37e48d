// Unit tests of the AIMD limit: the reference's own cases (AIMDLimitTest), then its edges and its options.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aimd } from '../../src/adaptive/algorithms/aimd.js';
import { pointed } from '../harness/error-pointer.js';

const ok = (rttMs: number, inFlight: number) => ({ rttMs, inFlight, dropped: false });
const drop = (rttMs: number, inFlight: number) => ({ rttMs, inFlight, dropped: true });

/** Asserts `fn` throws a configuration error for `option` with exactly `message`, then the pointer to its code. */
function refuses(fn: () => unknown, option: string, message: string): void {
  assert.throws(fn, {
    name: 'TollgateError',
    code: 'ERR_TOLLGATE_CONFIG',
    option,
    message: pointed(message),
  });
}

describe('aimd: the reference cases (AIMDLimitTest)', () => {
  it('testDefault: starts at its initial limit', () => {
    assert.equal(aimd({ initialLimit: 10 }).limit, 10);
  });

  it('increaseOnSuccess: a 1 ms success with half the limit in flight adds 1', () => {
    const limit = aimd({ initialLimit: 20 });
    assert.equal(limit.sample(ok(1, 10)), 21);
    assert.equal(limit.limit, 21);
  });

  it('decreaseOnDrops: a drop takes the limit to 90%', () => {
    const limit = aimd({ initialLimit: 30 });
    assert.equal(limit.sample(drop(0, 0)), 27);
    assert.equal(limit.limit, 27);
  });

  it('successOverflow: at the max, a success leaves it there (minLimit 1 where the reference has 0)', () => {
    const limit = aimd({ initialLimit: 21, maxLimit: 21, minLimit: 1 });
    assert.equal(limit.sample(ok(1, 10)), 21);
  });
});

describe('aimd: increase, decrease and bounds', () => {
  it('reports its name and no round-trip figures', () => {
    const limit = aimd();
    assert.equal(limit.name, 'aimd');
    assert.deepEqual(limit.rtt, {});
    assert.ok(Object.isFrozen(limit.rtt));
    assert.equal(limit.limit, 20);
  });

  it('adds 1 only once at least half the limit is in flight', () => {
    const limit = aimd({ initialLimit: 30, minLimit: 1 });
    assert.equal(limit.sample(ok(1, 14)), 30);
    assert.equal(limit.sample(ok(1, 15)), 31);
    assert.equal(limit.sample(ok(1, 16)), 32);
  });

  it('keeps the whole part of limit x backoffRatio', () => {
    const limit = aimd({ initialLimit: 25, minLimit: 1, backoffRatio: 0.5 });
    assert.equal(limit.sample(drop(1, 0)), 12);
    assert.equal(limit.sample(drop(1, 0)), 6);
    assert.equal(limit.sample(drop(1, 0)), 3);
    assert.equal(limit.sample(drop(1, 0)), 1);
    assert.equal(limit.sample(drop(1, 0)), 1);
    const tenths = aimd({ initialLimit: 25, minLimit: 1 });
    assert.equal(tenths.sample(drop(1, 0)), 22);
    assert.equal(tenths.sample(drop(1, 0)), 19);
  });

  it('backs off on a drop however many are in flight', () => {
    const limit = aimd({ initialLimit: 30, minLimit: 1 });
    assert.equal(limit.sample(drop(1, 30)), 27);
  });

  it('counts a round trip beyond the timeout (5 s by default) as a drop, and one of exactly the timeout not', () => {
    const limit = aimd({ initialLimit: 30, minLimit: 1 });
    assert.equal(limit.sample(ok(5000, 15)), 31);
    assert.equal(limit.sample(ok(5000.5, 30)), 27);
    const short = aimd({ initialLimit: 30, minLimit: 1, timeoutMs: '2s' });
    assert.equal(short.sample(ok(2000, 15)), 31);
    assert.equal(short.sample(ok(2001, 30)), 27);
    const numeric = aimd({ initialLimit: 30, minLimit: 1, timeoutMs: 100 });
    assert.equal(numeric.sample(ok(101, 30)), 27);
  });

  it('holds the limit at minLimit and maxLimit', () => {
    const floor = aimd({ initialLimit: 20, minLimit: 19 });
    assert.equal(floor.sample(drop(1, 0)), 19);
    const ceiling = aimd({ initialLimit: 200 });
    assert.equal(ceiling.sample(ok(1, 200)), 200);
    const near = aimd({ initialLimit: 199 });
    assert.equal(near.sample(ok(1, 200)), 200);
    assert.equal(near.sample(ok(1, 200)), 200);
  });

  it('starts below minLimit when told to, lifted to it by the first sample even one that changes nothing', () => {
    const limit = aimd({ initialLimit: 10 });
    assert.equal(limit.limit, 10);
    assert.equal(limit.sample(ok(1, 0)), 20);
  });
});

describe('aimd: options', () => {
  it('refuses a non-object and unknown keys', () => {
    refuses(() => aimd(null as never), 'options', '`options` must be an object (received null)');
    refuses(() => aimd(5 as never), 'options', '`options` must be an object (received 5)');
    refuses(
      () => aimd({ backofRatio: 0.5 } as never),
      'backofRatio',
      '`backofRatio` is not an option of aimd; did you mean `backoffRatio`?',
    );
    refuses(
      () => aimd({ timeout: 5 } as never),
      'timeout',
      '`timeout` is not an option of aimd; did you mean `timeoutMs`?',
    );
  });

  it('refuses limits that are not positive integers', () => {
    refuses(
      () => aimd({ initialLimit: 0 }),
      'initialLimit',
      '`initialLimit` must be a positive integer (received 0)',
    );
    refuses(() => aimd({ minLimit: 0 }), 'minLimit', '`minLimit` must be a positive integer (received 0)');
    refuses(
      () => aimd({ maxLimit: 2.5 }),
      'maxLimit',
      '`maxLimit` must be a positive integer (received 2.5)',
    );
  });

  it('refuses a minLimit above maxLimit and an initialLimit above maxLimit', () => {
    refuses(
      () => aimd({ minLimit: 11, maxLimit: 10, initialLimit: 10 }),
      'minLimit',
      '`minLimit` must be at most `maxLimit` (10) (received 11)',
    );
    refuses(
      () => aimd({ minLimit: 5, maxLimit: 10, initialLimit: 11 }),
      'initialLimit',
      '`initialLimit` must be at most `maxLimit` (10) (received 11)',
    );
    const equal = aimd({ minLimit: 10, maxLimit: 10, initialLimit: 10 });
    assert.equal(equal.sample(ok(1, 10)), 10);
    assert.equal(equal.sample(drop(1, 10)), 10);
  });

  it('takes a backoffRatio from 0.5 up to, not including, 1', () => {
    for (const bad of [0.49, 1, Number.NaN, '0.9']) {
      refuses(
        () => aimd({ backoffRatio: bad as number }),
        'backoffRatio',
        `\`backoffRatio\` must be a number at least 0.5 and below 1 (received ${typeof bad === 'string' ? '"0.9"' : bad})`,
      );
    }
    assert.equal(aimd({ initialLimit: 30, minLimit: 1, backoffRatio: 0.99 }).sample(drop(1, 0)), 29);
  });

  it('takes timeoutMs as a positive duration', () => {
    refuses(
      () => aimd({ timeoutMs: 0 }),
      'timeoutMs',
      "`timeoutMs` must be a positive whole number of milliseconds or a duration such as '10s' (received 0)",
    );
  });
});
