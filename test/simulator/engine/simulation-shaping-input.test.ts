// simulate()'s input for concurrency limits and lockouts: service times, blockMs and the factories' errors, and their work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TollgateError } from '../../../src/core/errors.js';
import {
  type LimiterSpec,
  policyFromSpec,
  type ServiceSpec,
  simulate,
  simulationWork,
} from '../../../src/simulator/engine/index.js';
import { withoutPointer } from '../../harness/error-pointer.js';

function assertTollgateError(fn: () => unknown, code: string, pattern: RegExp, option?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof TollgateError, `expected a TollgateError, got ${String(error)}`);
    assert.equal(error.code, code);
    // Its own words: a prefixed message still ends with one pointer, the one to its code's section.
    assert.match(withoutPointer(error), pattern);
    if (option !== undefined) assert.equal(error.option, option);
    return true;
  });
}

const UNIFORM: ServiceSpec = { kind: 'uniform', minMs: 200, maxMs: '2s', seed: 3 };

describe('simulate: concurrency and lockout input', () => {
  const CONCURRENCY: LimiterSpec = { kind: 'concurrency', max: 2, leaseMs: '10s' };

  it('needs a service time for a concurrency policy, and checks it naming the field', () => {
    assertTollgateError(
      () => simulate({ policies: [CONCURRENCY], arrivals: [0] }),
      'ERR_TOLLGATE_CONFIG',
      /^`service` is required to simulate a concurrency policy/,
      'service',
    );
    const bad: [unknown, RegExp, string][] = [
      ['2s', /^service: `service` must be an object/, 'service'],
      [{ kind: 'normal' }, /^service: `kind` must be one of "fixed", "uniform"/, 'kind'],
      [
        { kind: 'fixed', durationMs: 0 },
        /^service: `durationMs` must be a positive whole number/,
        'durationMs',
      ],
      [{ kind: 'fixed', durationMs: 5, seed: 1 }, /`seed` is not an option of a fixed service time/, 'seed'],
      [{ kind: 'uniform', minMs: '2s', maxMs: '1s', seed: 1 }, /`maxMs` must not be below `minMs`/, 'maxMs'],
      [{ kind: 'uniform', minMs: 1, maxMs: 2, seed: -1 }, /`seed` must be a non-negative integer/, 'seed'],
      [{ kind: 'uniform', minMs: 1, maxMs: 2, seed: 2 ** 32 }, /`seed` must be below 2\^32/, 'seed'],
      [{ kind: 'fixed', durationMs: 2 ** 52 }, /`durationMs` must be below 2\^51 ms/, 'durationMs'],
    ];
    for (const [service, message, option] of bad) {
      assertTollgateError(
        () => simulate({ policies: [CONCURRENCY], arrivals: [0], service: service as ServiceSpec }),
        'ERR_TOLLGATE_CONFIG',
        message,
        option,
      );
    }
  });

  it('builds the concurrency policy with its factory, whose errors name the option', () => {
    assertTollgateError(
      () =>
        simulate({ policies: [{ ...CONCURRENCY, max: -1 } as LimiterSpec], arrivals: [], service: UNIFORM }),
      'ERR_TOLLGATE_CONFIG',
      /^policy 1: `max` must be a non-negative integer \(received -1\)$/,
      'max',
    );
    assertTollgateError(
      () => simulate({ policies: [{ ...CONCURRENCY, limit: 2 } as never], arrivals: [], service: UNIFORM }),
      'ERR_TOLLGATE_CONFIG',
      /`limit` is not an option of a concurrency policy/,
    );
    assertTollgateError(
      () =>
        simulate({ policies: [{ kind: 'concurrency', max: 2 } as never], arrivals: [], service: UNIFORM }),
      'ERR_TOLLGATE_CONFIG',
      /^policy 1: `leaseMs` must be a positive whole number/,
      'leaseMs',
    );
  });

  it('checks blockMs as createLimiter does, and keeps it out of a policy spec', () => {
    const window = { kind: 'fixed-window', limit: 3, windowMs: '1s' } as const;
    for (const [blockMs, message] of [
      ['soon', /^policy 2: `blockMs` must be a positive whole number of milliseconds/],
      [-5, /`blockMs` must be a positive whole number/],
      [2 ** 52, /`blockMs` must be below 2\^51 ms/],
    ] as const) {
      assertTollgateError(
        () => simulate({ policies: [window, { ...window, blockMs } as LimiterSpec], arrivals: [] }),
        'ERR_TOLLGATE_CONFIG',
        message,
        'blockMs',
      );
    }
    assertTollgateError(
      () => policyFromSpec({ ...window, blockMs: '5s' } as never),
      'ERR_TOLLGATE_CONFIG',
      /`blockMs` is not an option of a fixed-window policy/,
    );
    assertTollgateError(
      () => simulate({ policies: [{ kind: 'lockout' } as never], arrivals: [] }),
      'ERR_TOLLGATE_CONFIG',
      /^policy 1: `kind` must be one of/,
      'kind',
    );
  });

  it('counts the work of slots, releases and lockouts before running', () => {
    const arrivals = [0, 6000, 6000];
    const service: ServiceSpec = { kind: 'fixed', durationMs: 100 };
    const window: LimiterSpec = { kind: 'fixed-window', limit: 5, windowMs: '10s' };
    // With a concurrency limit the samples run to a tenth past 6100 ms, when the last request finishes: 0 to
    // 6710, 12 ms apart.
    const samples = simulate({ policies: [CONCURRENCY], arrivals, service }).policies[0]?.levels.length ?? 0;
    assert.equal(samples, 560);
    const plain =
      simulationWork({ policies: [window, CONCURRENCY], arrivals, service }) - (4 * 3 + samples) * 9;
    assert.equal(plain, arrivals.length + samples);
    assert.equal(plain, arrivals.length + samples);
    // Without one, 601 samples to 6600 ms; a lockout counts its policy twice and itself once.
    assert.equal(simulationWork({ policies: [{ ...window, blockMs: '1s' }], arrivals }), (3 + 601) * 3);
    // Four passes over max 2 slots per evaluation, and each arrival's release three evaluations more.
    assert.equal(simulationWork({ policies: [CONCURRENCY], arrivals, service }), (4 * 3 + samples) * 9);
    const input = { policies: [CONCURRENCY], arrivals, service };
    assertTollgateError(
      () => simulate(input, { maxWork: simulationWork(input) - 1 }),
      'ERR_TOLLGATE_ARGUMENT',
      /units of work/,
    );
  });
});
