// A policy kind the library does not ship, simulated from its description alone: the engine reads no kind by name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TollgateError } from '../../../src/core/errors.js';
import { concurrencyDescription } from '../../../src/policies/concurrency.js';
import {
  type LimiterSpec,
  policyFromSpec,
  simulate,
  simulationWork,
} from '../../../src/simulator/engine/index.js';
import { leakyBucketDescription } from '../../fixtures/leaky-bucket.js';

const EXTRA = { policies: [leakyBucketDescription] };
const LEAKY: LimiterSpec = { kind: 'leaky-bucket', capacity: 3, leak: 1, everyMs: 1000 };
/** A burst of five at 0, two more at 1 s (one tick later), one at 2.5 s. */
const BURST = [0, 0, 0, 0, 0, 1000, 1000, 2500];
const BUILT_IN_KINDS =
  '"token-bucket", "fixed-window", "sliding-window", "sliding-window-counter", "concurrency"';

/** Asserts a TollgateError naming `option`, its message matching `message`. */
function throwsNaming(run: () => unknown, message: RegExp, option: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof TollgateError);
    assert.match(error.message, message);
    assert.equal(error.option, option);
    return true;
  });
}

describe('a policy kind given to the simulation as a description', () => {
  it('is simulated through its own transitions: a burst fills the bucket, each tick lets one more through', () => {
    const [result] = simulate({ policies: [LEAKY], arrivals: BURST }, EXTRA).policies;
    assert.ok(result);
    assert.deepEqual(result.policy, { kind: 'leaky-bucket', name: 'leaky-bucket', limit: 3, windowMs: 3000 });
    // It says of itself that its level is a count, and that it holds no slots.
    assert.equal(result.level, 'window-count');
    assert.deepEqual(
      result.timeline.map(({ allowed, retryAfterMs, level }) => [allowed, retryAfterMs, level]),
      [
        [true, 0, 1],
        [true, 0, 2],
        [true, 0, 3],
        [false, 1000, 3],
        [false, 1000, 3],
        [true, 0, 3],
        [false, 1000, 3],
        [true, 0, 3],
      ],
    );
    assert.deepEqual(result.summary, {
      admitted: 5,
      rejected: 3,
      maxAdmittedInWindow: 5,
      longestRetryAfterMs: 1000,
      rejectedForever: 0,
    });
    assert.deepEqual(result.releases, []);
  });

  it('runs beside the built-in kinds, with a lockout as any policy', () => {
    const { policies } = simulate(
      {
        policies: [
          { ...LEAKY, blockMs: '2s' },
          { kind: 'token-bucket', capacity: 3, refillPerSecond: 1 },
        ],
        arrivals: BURST,
      },
      EXTRA,
    );
    assert.deepEqual(
      policies.map((p) => [p.policy.kind, p.level, p.blockMs]),
      [
        ['leaky-bucket', 'window-count', 2000],
        ['token-bucket', 'tokens', undefined],
      ],
    );
    assert.ok((policies[0]?.summary.rejectedByLockout ?? 0) > 0);
  });

  it('costs one unit per evaluation in simulationWork: its state is a tuple, not a list', () => {
    const input = { policies: [LEAKY], arrivals: BURST };
    const [result] = simulate(input, EXTRA).policies;
    assert.equal(simulationWork(input, EXTRA), BURST.length + (result?.levels.length ?? 0));
  });

  it('is built by policyFromSpec with its factory', () => {
    const policy = policyFromSpec({ ...LEAKY, name: 'drip' }, EXTRA);
    assert.deepEqual([policy.kind, policy.name, policy.args], ['leaky-bucket', 'drip', [3, 1, 1000]]);
  });

  it('is refused without its description, the built-in kinds listed in their order', () => {
    throwsNaming(
      () => simulate({ policies: [LEAKY], arrivals: [] }),
      new RegExp(`^policy 1: \`kind\` must be one of ${BUILT_IN_KINDS} \\(received "leaky-bucket"\\)`),
      'kind',
    );
    throwsNaming(() => simulationWork({ policies: [LEAKY], arrivals: [] }), /`kind` must be one of/, 'kind');
    throwsNaming(
      () => simulate({ policies: [{ kind: 'drip' }], arrivals: [] }, EXTRA),
      new RegExp(`must be one of ${BUILT_IN_KINDS}, "leaky-bucket"`),
      'kind',
    );
  });

  it('takes only the options its description lists', () => {
    throwsNaming(
      () => simulate({ policies: [{ ...LEAKY, rate: 2 }], arrivals: [] }, EXTRA),
      /^policy 1: `rate` is not an option of a leaky-bucket policy/,
      'rate',
    );
  });

  it('is leased, or not, by what its policy says: a leased kind needs service times and counts slots', () => {
    const pool = { ...concurrencyDescription, kind: 'pool' };
    const spec: LimiterSpec = { kind: 'pool', max: 1, leaseMs: '10s' };
    throwsNaming(
      () => simulate({ policies: [spec], arrivals: [0] }, { policies: [pool] }),
      /^`service` is required to simulate a concurrency policy/,
      'service',
    );
    const [result] = simulate(
      { policies: [spec], arrivals: [0, 100, 600], service: { kind: 'fixed', durationMs: 500 } },
      { policies: [pool] },
    ).policies;
    assert.equal(result?.level, 'in-flight');
    assert.equal(result?.policy.leaseMs, 10_000);
    assert.deepEqual(
      result?.timeline.map((e) => e.allowed),
      [true, false, true],
    );
    assert.equal(result?.summary.maxInFlight, 1);
  });

  it('checks the descriptions, naming `policies`', () => {
    const input = { policies: [LEAKY], arrivals: [] };
    const fails = (policies: unknown, message: RegExp) =>
      throwsNaming(() => simulate(input, { policies: policies as never }), message, 'policies');
    fails('leaky-bucket', /must be an array of policy descriptions/);
    fails([{ ...leakyBucketDescription, build: undefined }], /entry 1 must be a policy description/);
    fails(
      [{ ...leakyBucketDescription, fields: [['rate', 'Rate', '1']] }],
      /entry 1 must be a policy description/,
    );
    fails([leakyBucketDescription, concurrencyDescription], /entry 2 describes the kind "concurrency" again/);
    fails(
      [leakyBucketDescription, leakyBucketDescription],
      /entry 2 describes the kind "leaky-bucket" again/,
    );
  });
});
