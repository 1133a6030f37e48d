// Unit tests of adaptiveConcurrency: its options, admissions and denials, what a release measures, and its figures.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AdaptiveConcurrencyOptions,
  adaptiveConcurrency,
} from '../../src/adaptive/adaptive-concurrency.js';
import type { Duration } from '../../src/core/duration.js';
import type { Ending, LocalSlot } from '../../src/policies/local-policy.js';
import { pointed } from '../harness/error-pointer.js';
import { ManualClock, StubAlgorithm } from './stub-algorithm.js';

/** A limit at `limit` on a stub algorithm and a clock moved by hand. */
function limited(limit: number, options: Omit<AdaptiveConcurrencyOptions, 'algorithm' | 'clock'> = {}) {
  const algorithm = new StubAlgorithm(limit);
  const clock = new ManualClock();
  const policy = adaptiveConcurrency({ ...options, algorithm, clock: clock.read });
  return { policy, algorithm, clock };
}

function refuses(options: unknown, option: string, message: string): void {
  assert.throws(() => adaptiveConcurrency(options as AdaptiveConcurrencyOptions), {
    name: 'TollgateError',
    code: 'ERR_TOLLGATE_CONFIG',
    option,
    message: pointed(message),
  });
}

/** The slot an admission holds, asserting there is one. */
function slotOf(admission: { readonly slot: LocalSlot | undefined }): LocalSlot {
  assert.ok(admission.slot !== undefined, 'admitted with a slot');
  return admission.slot;
}

const DURATION = "must be a positive whole number of milliseconds or a duration such as '10s'";

describe('adaptiveConcurrency: options', () => {
  it('refuses what is not an options object, and unknown keys with the nearest known one', () => {
    refuses(null, 'options', '`options` must be an object (received null)');
    refuses('fast', 'options', '`options` must be an object (received "fast")');
    refuses(
      { algorithmm: new StubAlgorithm(1) },
      'algorithmm',
      '`algorithmm` is not an option of adaptiveConcurrency; did you mean `algorithm`?',
    );
    refuses({ max: 3 }, 'max', '`max` is not an option of adaptiveConcurrency');
  });

  it('refuses an algorithm not made by an algorithm factory, and one already used by another limit', () => {
    const made = 'must be made by vegas(), gradient2(), aimd() or gradient()';
    refuses({ algorithm: {} }, 'algorithm', `\`algorithm\` ${made} (received [object Object])`);
    refuses({ algorithm: { sample: 1 } }, 'algorithm', `\`algorithm\` ${made} (received [object Object])`);
    refuses({ algorithm: 'vegas' }, 'algorithm', `\`algorithm\` ${made} (received "vegas")`);
    const callable = Object.assign(() => 4, { limit: 4, sample: () => 4 });
    assert.throws(
      () => adaptiveConcurrency({ algorithm: callable as unknown as StubAlgorithm }),
      (error: Error & { code?: string }) =>
        error.code === 'ERR_TOLLGATE_CONFIG' && error.message.startsWith(`\`algorithm\` ${made}`),
    );
    const algorithm = new StubAlgorithm(4);
    adaptiveConcurrency({ algorithm });
    refuses(
      { algorithm },
      'algorithm',
      '`algorithm` is used by another adaptive limit already: make one for each limit',
    );
  });

  it('leaves the algorithm free when another option is refused, for the corrected limit to take', {}, () => {
    const refused = [{ status: 200 }, { name: 'two words' }, { partitions: { a: 2 } }, { dropped: 1 }];
    for (const bad of [...refused, { maxHoldMs: 0 }]) {
      const algorithm = new StubAlgorithm(4);
      assert.throws(() => adaptiveConcurrency({ algorithm, ...bad } as AdaptiveConcurrencyOptions));
      assert.equal(adaptiveConcurrency({ algorithm }).algorithm, algorithm);
    }
  });

  it('makes each limit its own default algorithm, gradient', () => {
    const first = adaptiveConcurrency();
    const second = adaptiveConcurrency({ clock: () => 0 });
    assert.equal(first.algorithm.name, 'gradient');
    assert.equal(second.algorithm.name, 'gradient');
    assert.notEqual(first.algorithm, second.algorithm);
  });

  it("runs the default gradient on the limit's clock, capped to demand and measuring again when faster", () => {
    let nowMs = 0;
    const policy = adaptiveConcurrency({ clock: () => nowMs });
    /** `rounds` of three requests at once, each `rttMs` long; the limit after every `every` rounds. */
    const limits = (rttMs: number, rounds: number, every: number) => {
      const seen: number[] = [];
      for (let round = 1; round <= rounds; round++) {
        const slots = [0, 1, 2].map(() => policy.admit(undefined).slot);
        nowMs += rttMs;
        for (const slot of slots) slot?.release({ status: 200 });
        if (round % every === 0) seen.push(policy.algorithm.limit);
      }
      return seen;
    };
    // The minimum measured (17 rounds of 3 pass the 50 round trips), then a rise: to twice the 3 in flight, no more.
    assert.deepEqual(limits(10, 17, 17), [3]);
    assert.deepEqual(limits(10, 60, 10), [5, 6, 6, 6, 6, 6]);
    // Round trips faster than the minimum by more than the buffer hold the limit; five updates of them measure again.
    assert.deepEqual(limits(4, 175, 25), [6, 6, 6, 6, 3, 6, 6]);
  });

  it('refuses a bad name, status, retryAfterMs, dropped or clock, naming the option', () => {
    const algorithm = () => new StubAlgorithm(1);
    const nameRule = 'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"';
    refuses(
      { algorithm: algorithm(), name: 'two words' },
      'name',
      `\`name\` ${nameRule} (received "two words")`,
    );
    refuses({ algorithm: algorithm(), name: '' }, 'name', `\`name\` ${nameRule} (received "")`);
    const errorStatus = 'must be an HTTP error status (400-599)';
    refuses({ algorithm: algorithm(), status: 399 }, 'status', `\`status\` ${errorStatus} (received 399)`);
    refuses({ algorithm: algorithm(), status: 600 }, 'status', `\`status\` ${errorStatus} (received 600)`);
    refuses(
      { algorithm: algorithm(), status: 503.5 },
      'status',
      '`status` must be a positive integer (received 503.5)',
    );
    assert.equal(adaptiveConcurrency({ algorithm: algorithm(), status: 400 }).denyStatus, 400);
    assert.equal(adaptiveConcurrency({ algorithm: algorithm(), status: 599 }).denyStatus, 599);
    for (const bad of [0, -1, 1.5, 'soon'])
      refuses(
        { algorithm: algorithm(), retryAfterMs: bad },
        'retryAfterMs',
        `\`retryAfterMs\` ${DURATION} (received ${typeof bad === 'string' ? `"${bad}"` : bad})`,
      );
    refuses(
      { algorithm: algorithm(), retryAfterMs: 2 ** 51 },
      'retryAfterMs',
      `\`retryAfterMs\` must be below 2^51 ms (received ${2 ** 51})`,
    );
    refuses(
      { algorithm: algorithm(), dropped: 503 },
      'dropped',
      '`dropped` must be a function (received 503)',
    );
    refuses({ algorithm: algorithm(), clock: 0 }, 'clock', '`clock` must be a function (received 0)');
  });

  it('refuses a maxHoldMs that is not a duration one timer honours, and takes one that is', () => {
    const algorithm = () => new StubAlgorithm(1);
    for (const bad of [0, -1, 1.5, 'soon'])
      refuses(
        { algorithm: algorithm(), maxHoldMs: bad },
        'maxHoldMs',
        `\`maxHoldMs\` ${DURATION} (received ${typeof bad === 'string' ? `"${bad}"` : bad})`,
      );
    refuses(
      { algorithm: algorithm(), maxHoldMs: 2 ** 31 },
      'maxHoldMs',
      `\`maxHoldMs\` must be at most ${2 ** 31 - 1} ms (about 24.8 days) (received ${2 ** 31})`,
    );
    for (const good of [1, '30s', 2 ** 31 - 1] as Duration[])
      assert.equal(adaptiveConcurrency({ algorithm: algorithm(), maxHoldMs: good }).limit, 1);
  });

  it('takes retryAfterMs as ms or a duration, up to just below 2^51 ms', () => {
    const retryOf = (retryAfterMs: Duration) =>
      adaptiveConcurrency({ algorithm: new StubAlgorithm(1), retryAfterMs }).facts().retryHintMs;
    assert.equal(retryOf(1), 1);
    assert.equal(retryOf('2s'), 2000);
    assert.equal(retryOf(2 ** 51 - 1), 2 ** 51 - 1);
  });
});

describe('adaptiveConcurrency: the policy it builds', () => {
  it('is a local policy at its algorithm limit, 503 and 1 s by default', () => {
    const { policy, algorithm } = limited(7);
    assert.deepEqual(
      {
        local: policy.local,
        kind: policy.kind,
        name: policy.name,
        limit: policy.limit,
        denyStatus: policy.denyStatus,
        inFlight: policy.inFlight,
      },
      {
        local: true,
        kind: 'adaptive-concurrency',
        name: 'adaptive-concurrency',
        limit: 7,
        denyStatus: 503,
        inFlight: 0,
      },
    );
    assert.equal(policy.algorithm, algorithm);
    assert.deepEqual(policy.facts(), {
      kind: 'adaptive-concurrency',
      name: 'adaptive-concurrency',
      limit: 7,
      windowMs: 0,
      quotaUnit: 'concurrent-requests',
      retryHintMs: 1000,
    });
    const named = limited(2, { name: 'api-guard', retryAfterMs: 250, status: 429 }).policy;
    assert.equal(named.name, 'api-guard');
    assert.equal(named.denyStatus, 429);
    assert.deepEqual(named.facts(), { ...policy.facts(), name: 'api-guard', limit: 2, retryHintMs: 250 });
  });

  it('admits up to the limit, then denies with the retry its options advise', () => {
    const { policy } = limited(3, { retryAfterMs: '2s' });
    const results = [1, 2, 3, 4].map(() => policy.admit(undefined));
    assert.deepEqual(
      results.map(({ result }) => result),
      [
        { allowed: true, remaining: 2, resetMs: 0, retryAfterMs: 0 },
        { allowed: true, remaining: 1, resetMs: 0, retryAfterMs: 0 },
        { allowed: true, remaining: 0, resetMs: 0, retryAfterMs: 0 },
        { allowed: false, remaining: 0, resetMs: 2000, retryAfterMs: 2000 },
      ],
    );
    assert.deepEqual(
      results.map(({ slot }) => slot !== undefined),
      [true, true, true, false],
    );
    assert.equal(policy.inFlight, 3);
    assert.deepEqual(limited(1).policy.admit('x').result, {
      allowed: true,
      remaining: 0,
      resetMs: 0,
      retryAfterMs: 0,
    });
  });

  it('follows its algorithm limit as it moves, never telling a negative remainder', () => {
    const { policy, algorithm } = limited(3);
    for (let i = 0; i < 3; i++) policy.admit(undefined);
    algorithm.limit = 1;
    assert.equal(policy.limit, 1);
    assert.deepEqual(policy.admit(undefined).result, {
      allowed: false,
      remaining: 0,
      resetMs: 1000,
      retryAfterMs: 1000,
    });
    algorithm.limit = 5;
    assert.deepEqual(policy.admit(undefined).result, {
      allowed: true,
      remaining: 1,
      resetMs: 0,
      retryAfterMs: 0,
    });
  });

  it('peeks without taking or counting anything', () => {
    const { policy } = limited(1);
    for (let i = 0; i < 3; i++) assert.equal(policy.peek(undefined).allowed, true);
    assert.equal(policy.inFlight, 0);
    policy.admit(undefined);
    assert.deepEqual(policy.peek('any'), { allowed: false, remaining: 0, resetMs: 1000, retryAfterMs: 1000 });
    // Held, not yet released: nothing completed.
    assert.deepEqual(policy.stats().partitions, [
      { name: '', share: 0, inFlight: 1, completed: 0, rejected: 0, dropped: 0 },
    ]);
  });

  it('peeks at what an admission would answer, its remainder after it as a store policy tells', {}, () => {
    const { policy } = limited(3);
    const peeked = policy.peek(undefined);
    assert.deepEqual(peeked, policy.admit(undefined).result);
    assert.deepEqual(peeked, { allowed: true, remaining: 2, resetMs: 0, retryAfterMs: 0 });
  });
});

describe('adaptiveConcurrency: releases and cancels', () => {
  it('measures a release: its time since admission on the clock and the requests in flight at admission', () => {
    const { policy, algorithm, clock } = limited(4);
    clock.nowMs = 100;
    const first = slotOf(policy.admit(undefined));
    clock.nowMs = 102.25;
    const second = slotOf(policy.admit(undefined));
    const completed = () => policy.stats().partitions[0]?.completed;
    assert.equal(completed(), 0);
    clock.nowMs = 150.5;
    second.release();
    assert.equal(policy.inFlight, 1);
    assert.equal(completed(), 1);
    clock.nowMs = 400;
    first.release({ status: 200 });
    assert.equal(policy.inFlight, 0);
    const third = slotOf(policy.admit(undefined));
    assert.equal(completed(), 2);
    clock.nowMs = 401;
    third.release({});
    assert.equal(completed(), 3);
    assert.deepEqual(algorithm.samples, [
      { rttMs: 48.25, inFlight: 2, dropped: false },
      { rttMs: 300, inFlight: 1, dropped: false },
      { rttMs: 1, inFlight: 1, dropped: false },
    ]);
  });

  it('measures on performance.now by default', () => {
    const algorithm = new StubAlgorithm(1);
    const policy = adaptiveConcurrency({ algorithm });
    const before = performance.now();
    const slot = slotOf(policy.admit(undefined));
    slot.release();
    const rttMs = algorithm.samples[0]?.rttMs ?? Number.NaN;
    assert.ok(rttMs >= 0 && rttMs <= performance.now() - before, `rtt ${rttMs}`);
  });

  it('tells a drop by 429, 503 or 504 by default, and no other status', () => {
    const { policy, algorithm } = limited(1);
    const statuses = [429, 503, 504, 200, 404, 500, 502, 428, 430, 505];
    for (const status of statuses) slotOf(policy.admit(undefined)).release({ status });
    assert.deepEqual(
      algorithm.samples.map(({ dropped }) => dropped),
      [true, true, true, false, false, false, false, false, false, false],
    );
    // A dropped request held its slot to its release too: completed, and counted among the drops.
    assert.deepEqual(
      [policy.stats().partitions[0]?.completed, policy.stats().partitions[0]?.dropped],
      [10, 3],
    );
  });

  it('tells a drop by its own dropped function, asked only of a status', () => {
    const asked: number[] = [];
    const { policy, algorithm } = limited(1, {
      dropped: (status) => {
        asked.push(status);
        return status >= 500;
      },
    });
    const endings: (Ending | undefined)[] = [
      { status: 500 },
      { status: 429 },
      undefined,
      {},
      { status: 599 },
    ];
    for (const ending of endings) slotOf(policy.admit(undefined)).release(ending);
    assert.deepEqual(
      algorithm.samples.map(({ dropped }) => dropped),
      [true, false, false, false, true],
    );
    assert.deepEqual(asked, [500, 429, 599]);
  });

  it('lets an ending that says dropped win over its status', () => {
    const { policy, algorithm } = limited(1, { dropped: () => true });
    const endings: Ending[] = [
      { status: 503, dropped: false },
      { status: 200, dropped: true },
      { dropped: true },
      { dropped: false },
    ];
    for (const ending of endings) slotOf(policy.admit(undefined)).release(ending);
    assert.deepEqual(
      algorithm.samples.map(({ dropped }) => dropped),
      [false, true, true, false],
    );
    assert.equal(policy.stats().partitions[0]?.dropped, 2);
  });

  it('cancels without measuring or counting, as if the request had never been admitted', () => {
    const { policy, algorithm } = limited(2);
    const kept = slotOf(policy.admit(undefined));
    const cancelled = slotOf(policy.admit(undefined));
    cancelled.cancel();
    assert.equal(policy.inFlight, 1);
    assert.deepEqual(algorithm.samples, []);
    assert.deepEqual(policy.stats().partitions, [
      { name: '', share: 0, inFlight: 1, completed: 0, rejected: 0, dropped: 0 },
    ]);
    kept.release();
    assert.equal(algorithm.samples.length, 1);
    assert.deepEqual(policy.stats().partitions, [
      { name: '', share: 0, inFlight: 0, completed: 1, rejected: 0, dropped: 0 },
    ]);
  });

  it('acts on the first release or cancel of a slot only', () => {
    const { policy, algorithm } = limited(3);
    const other = slotOf(policy.admit(undefined));
    const released = slotOf(policy.admit(undefined));
    const cancelled = slotOf(policy.admit(undefined));
    released.release({ status: 503 });
    released.release({ status: 503 });
    released.cancel();
    cancelled.cancel();
    cancelled.cancel();
    cancelled.release();
    assert.equal(policy.inFlight, 1);
    assert.equal(algorithm.samples.length, 1);
    assert.deepEqual(policy.stats().partitions, [
      { name: '', share: 0, inFlight: 1, completed: 1, rejected: 0, dropped: 1 },
    ]);
    other.release();
    assert.equal(policy.inFlight, 0);
    assert.equal(policy.stats().partitions[0]?.completed, 2);
  });
});

describe('adaptiveConcurrency: figures', () => {
  it('reports its stats: limit, in flight, the algorithm figures and each partition counts', () => {
    const { policy, algorithm } = limited(3, { name: 'guard', partitions: { live: 0.6, batch: 0.3 } });
    algorithm.rtt = { noLoad: 12.5 };
    const live = slotOf(policy.admit('live'));
    policy.admit('batch');
    slotOf(policy.admit(undefined)).release({ status: 504 });
    policy.admit(undefined);
    policy.admit('live');
    live.release();
    assert.deepEqual(policy.stats(), {
      name: 'guard',
      algorithm: 'vegas',
      limit: 3,
      inFlight: 2,
      rtt: { noLoad: 12.5 },
      partitions: [
        { name: 'live', share: 0.6, inFlight: 0, completed: 1, rejected: 1, dropped: 0 },
        { name: 'batch', share: 0.3, inFlight: 1, completed: 0, rejected: 0, dropped: 0 },
        { name: '', share: 0, inFlight: 1, completed: 1, rejected: 0, dropped: 1 },
      ],
    });
    assert.equal(new StubAlgorithm(1, 'aimd').name, 'aimd');
    assert.equal(adaptiveConcurrency({ algorithm: new StubAlgorithm(1, 'aimd') }).stats().algorithm, 'aimd');
  });

  it('tells the same facts while its limit holds, and new ones once it moves', () => {
    const { policy, algorithm } = limited(5);
    const first = policy.facts();
    policy.admit(undefined);
    assert.equal(policy.facts(), first);
    algorithm.limit = 6;
    const moved = policy.facts();
    assert.notEqual(moved, first);
    assert.equal(moved.limit, 6);
    assert.equal(policy.facts(), moved);
    algorithm.limit = 5;
    const back = policy.facts();
    assert.notEqual(back, first);
    assert.deepEqual(back, first);
  });
});
