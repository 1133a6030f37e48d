// The local deny cache on a hand-moved clock: what it repeats, how its figures age, when it lets Redis decide again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedWindow } from '../../../src/policies/index.js';
import type { PolicyResult } from '../../../src/stores/index.js';
import { DenyCache } from '../../../src/stores/redis/deny-cache.js';
import type { StoreResponse } from '../../../src/stores/store.js';

/** The limits the denials below were made under: a limiter's array, the same object on each request. */
const LIMITS = [fixedWindow({ limit: 3, windowMs: 1000 })];

function setup(maxEntries = 100) {
  const clock = { now: 10_000 };
  return { clock, cache: new DenyCache(maxEntries, () => clock.now) };
}

const result = (
  allowed: boolean,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
): PolicyResult => ({
  allowed,
  remaining,
  resetMs,
  retryAfterMs,
});

/** A denial by the second of three policies, as Redis answered it at its own clock 5,000,000. */
const denial: StoreResponse = {
  allowed: false,
  nowMs: 5_000_000,
  results: [result(true, 3, 4000, 0), result(false, 0, 900, 500), result(true, 7, -1, 0)],
};

describe('DenyCache', () => {
  it('repeats a denial for the same key and cost, as it was answered', () => {
    const { cache } = setup();
    cache.set('k', 2, LIMITS, denial, 500);
    assert.deepEqual(cache.get('k', 2, LIMITS), denial);
    assert.equal(cache.get('other', 2, LIMITS), undefined);
  });

  it('forgets, by the start of their keys, every denial of one identifier and no other', () => {
    const { cache } = setup();
    for (const key of ['p:{s|a}:burst', 'p:{s|a}:daily', 'p:{s|ab}:burst', 'x:p:{s|a}:burst'])
      cache.set(key, 1, LIMITS, denial, 500);
    cache.deleteStartingWith('p:{s|a}');
    assert.deepEqual(
      ['p:{s|a}:burst', 'p:{s|a}:daily', 'p:{s|ab}:burst', 'x:p:{s|a}:burst'].map(
        (key) => cache.get(key, 1, LIMITS) !== undefined,
      ),
      [false, false, true, true],
    );
  });

  it('ages every figure by the time passed: the store clock on, resets and waits down, never below 0 or 1', () => {
    const { clock, cache } = setup();
    cache.set('k', 1, LIMITS, denial, 500);
    clock.now += 200;
    assert.deepEqual(cache.get('k', 1, LIMITS), {
      allowed: false,
      nowMs: 5_000_200,
      results: [result(true, 3, 3800, 0), result(false, 0, 700, 300), result(true, 7, -1, 0)],
    });
    clock.now += 299;
    assert.deepEqual(cache.get('k', 1, LIMITS)?.results[1], result(false, 0, 401, 1));
  });

  it('counts a part of a millisecond as a whole one, so a wait is never told too long', () => {
    const { clock, cache } = setup();
    cache.set('k', 1, LIMITS, denial, 500);
    clock.now += 0.25;
    assert.equal(cache.get('k', 1, LIMITS)?.results[1]?.retryAfterMs, 499);
    assert.equal(cache.get('k', 1, LIMITS)?.nowMs, 5_000_001);
  });

  it('a reset shorter than the time passed ages to 0, and a wait stays at least 1 ms until it ends', () => {
    const { clock, cache } = setup();
    const short: StoreResponse = {
      ...denial,
      results: [result(false, 0, 100, 800), result(true, 2, 0, 0), result(true, 2, -1, 0)],
    };
    cache.set('k', 1, LIMITS, short, 800);
    clock.now += 300;
    assert.deepEqual(cache.get('k', 1, LIMITS)?.results, [
      result(false, 0, 0, 500),
      result(true, 2, 0, 0),
      result(true, 2, -1, 0),
    ]);
  });

  it('lets Redis decide again exactly at the retry time, and forgets the entry then', () => {
    const { clock, cache } = setup();
    cache.set('k', 1, LIMITS, denial, 500);
    clock.now += 499;
    assert.notEqual(cache.get('k', 1, LIMITS), undefined);
    clock.now += 1;
    assert.equal(cache.get('k', 1, LIMITS), undefined);
    clock.now -= 1;
    assert.equal(cache.get('k', 1, LIMITS), undefined, 'the entry is gone, not only stale');
  });

  it('another cost goes to Redis, and the entry stays for its own cost', () => {
    const { cache } = setup();
    cache.set('k', 2, LIMITS, denial, 500);
    assert.equal(cache.get('k', 1, LIMITS), undefined);
    assert.equal(cache.get('k', 3, LIMITS), undefined);
    assert.notEqual(cache.get('k', 2, LIMITS), undefined);
  });

  it('a clock that went back goes to Redis', () => {
    const { clock, cache } = setup();
    cache.set('k', 1, LIMITS, denial, 500);
    clock.now -= 1;
    assert.equal(cache.get('k', 1, LIMITS), undefined);
    clock.now += 1;
    assert.notEqual(cache.get('k', 1, LIMITS), undefined);
  });

  it('keeps nothing that no wait cures, nor a wait of 0: such a denial takes no room from others', () => {
    const { cache } = setup(2);
    cache.set('a', 1, LIMITS, denial, 500);
    cache.set('b', 1, LIMITS, denial, 500);
    cache.set('never', 1, LIMITS, denial, -1);
    cache.set('now', 1, LIMITS, denial, 0);
    assert.equal(cache.get('never', 1, LIMITS), undefined);
    assert.equal(cache.get('now', 1, LIMITS), undefined);
    assert.notEqual(cache.get('a', 1, LIMITS), undefined);
    assert.notEqual(cache.get('b', 1, LIMITS), undefined);
  });

  it('without a clock, ages entries on performance.now()', (t) => {
    let now = 1000;
    t.mock.method(performance, 'now', () => now);
    const cache = new DenyCache(10);
    cache.set('k', 1, LIMITS, denial, 500);
    now += 200;
    assert.deepEqual(cache.get('k', 1, LIMITS)?.results[1], result(false, 0, 700, 300));
    assert.equal(cache.get('k', 1, LIMITS)?.nowMs, 5_000_200);
  });

  it('delete() forgets a key', () => {
    const { cache } = setup();
    cache.set('k', 1, LIMITS, denial, 500);
    cache.delete('k');
    assert.equal(cache.get('k', 1, LIMITS), undefined);
  });

  it('holds up to its size, and when full drops the expired entries, then the oldest until half full', () => {
    const { cache } = setup(4);
    for (const key of ['a', 'b', 'c', 'd']) cache.set(key, 1, LIMITS, denial, 10_000);
    const held = (keys: string[]) => keys.filter((key) => cache.get(key, 1, LIMITS) !== undefined);
    assert.deepEqual(held(['a', 'b', 'c', 'd']), ['a', 'b', 'c', 'd']);
    cache.set('e', 1, LIMITS, denial, 10_000);
    assert.deepEqual(held(['a', 'b', 'c', 'd', 'e']), ['c', 'd', 'e']);
  });

  it('when full, makes room from the expired entries first, though they are the newest', () => {
    const { clock, cache } = setup(4);
    cache.set('long1', 1, LIMITS, denial, 10_000);
    cache.set('long2', 1, LIMITS, denial, 10_000);
    cache.set('short1', 1, LIMITS, denial, 100);
    cache.set('short2', 1, LIMITS, denial, 100);
    // At exactly their retry time the short ones have expired.
    clock.now += 100;
    cache.set('new', 1, LIMITS, denial, 10_000);
    const kept = ['long1', 'long2', 'new'].filter((key) => cache.get(key, 1, LIMITS) !== undefined);
    assert.deepEqual(kept, ['long1', 'long2', 'new']);
  });

  it('repeats a denial only under the limits it was made under: other limits on the same key ask Redis', () => {
    const { cache } = setup();
    cache.set('k', 1, LIMITS, denial, 500);
    assert.equal(cache.get('k', 1, [fixedWindow({ limit: 3, windowMs: 1000 })]), undefined);
    assert.notEqual(cache.get('k', 1, LIMITS), undefined, 'and the entry stays for its own limits');
  });
});
