// What each built-in policy says of itself, which the stores, the limiter, the headers and the simulator read
// instead of asking its kind; and no module outside src/policies/ asks a policy which kind it is.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  concurrency,
  fixedWindow,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../../src/index.js';
import { alignedWindow } from '../../src/policies/aligned-window.js';
import { builtInPolicies, builtInTwins } from '../../src/policies/index.js';
import { lockout } from '../../src/policies/lockout.js';
import { type AnyPolicy, missingDescription } from '../../src/policies/policy.js';

const window = { limit: 5, windowMs: 1000 };
const POLICIES: readonly AnyPolicy[] = [
  tokenBucket({ capacity: 5, refillPerSecond: 1 }),
  fixedWindow(window),
  alignedWindow(window),
  slidingWindow(window),
  slidingWindowCounter(window),
  concurrency({ max: 2, leaseMs: 30_000 }),
  lockout(1000),
];

describe('a policy describes itself', () => {
  it('says how its state packs, whether it leases, its quota unit, its level and its parameters', () => {
    assert.deepEqual(
      POLICIES.map(({ kind, stateWidth, leased, quotaUnit, level, args }) => ({
        kind,
        stateWidth,
        leased,
        quotaUnit,
        level,
        args,
      })),
      [
        {
          kind: 'token-bucket',
          stateWidth: 1,
          leased: false,
          quotaUnit: undefined,
          level: 'tokens',
          args: [5, 1_000_000],
        },
        {
          kind: 'fixed-window',
          stateWidth: 2,
          leased: false,
          quotaUnit: undefined,
          level: 'window-count',
          args: [5, 1000],
        },
        {
          kind: 'aligned-window',
          stateWidth: 2,
          leased: false,
          quotaUnit: undefined,
          level: 'window-count',
          args: [5, 1000],
        },
        {
          kind: 'sliding-window',
          stateWidth: 0,
          leased: false,
          quotaUnit: undefined,
          level: 'window-count',
          args: [5, 1000],
        },
        {
          kind: 'sliding-window-counter',
          stateWidth: 3,
          leased: false,
          quotaUnit: undefined,
          level: 'window-count',
          args: [5, 1000],
        },
        {
          kind: 'concurrency',
          stateWidth: 0,
          leased: true,
          quotaUnit: 'concurrent-requests',
          level: 'in-flight',
          args: [2, 30_000],
        },
        {
          kind: 'lockout',
          stateWidth: 1,
          leased: false,
          quotaUnit: undefined,
          level: 'window-count',
          args: [1000],
        },
      ],
    );
  });

  it('carries its own Lua twin, the one the engine is built with, and says all a policy of its own must say', () => {
    for (const policy of POLICIES) assert.equal(policy.lua, builtInTwins[policy.kind], policy.kind);
    // The limiter's own lockout is named so that no policy of an application can take its name.
    assert.deepEqual(
      POLICIES.map((policy) => missingDescription(policy)),
      [
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        '`name` of 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"',
      ],
    );
  });

  it('offers each kind a limiter takes to JSON specs and the simulator, built by its own factory', () => {
    const windowed = {
      options: ['name', 'limit', 'windowMs'],
      fields: [
        ['limit', 'Limit', '5'],
        ['windowMs', 'Window (ms or 10s)', '10s'],
      ],
    };
    assert.deepEqual(
      builtInPolicies.map(({ build: _, ...description }) => description),
      [
        {
          kind: 'token-bucket',
          label: 'Token bucket',
          options: ['name', 'capacity', 'refillPerSecond', 'requestsPerMinute'],
          fields: [
            ['capacity', 'Capacity', '5'],
            ['refillPerSecond', 'Refill per second', '1'],
          ],
          limitLabel: 'capacity',
        },
        { kind: 'fixed-window', label: 'Fixed window', ...windowed },
        { kind: 'sliding-window', label: 'Sliding window (log)', ...windowed },
        { kind: 'sliding-window-counter', label: 'Sliding window counter', ...windowed },
        {
          kind: 'concurrency',
          label: 'Concurrency limit',
          options: ['name', 'max', 'leaseMs', 'retryAfterMs'],
          fields: [
            ['max', 'Max in flight', '2'],
            ['leaseMs', 'Lease (ms or 30s)', '30s'],
          ],
          limitLabel: 'max in flight',
        },
      ],
    );
    const options: Record<string, Record<string, unknown>> = {
      'token-bucket': { capacity: 3, refillPerSecond: 1, name: 'b' },
      concurrency: { max: 2, leaseMs: 1000, name: 'b' },
    };
    for (const { kind, build } of builtInPolicies) {
      const policy = build(options[kind] ?? { limit: 3, windowMs: 1000, name: 'b' });
      assert.deepEqual(
        [policy.kind, policy.name, policy.limit],
        [kind, 'b', options[kind] === undefined ? 3 : (options[kind].capacity ?? options[kind].max)],
      );
    }
  });

  it('is never asked its kind outside src/policies/', () => {
    const kinds = POLICIES.map(({ kind }) => kind).join('|');
    const asked = new RegExp(`(kind\\s*[!=]==?\\s*|case\\s+)'(${kinds})'`);
    const offenders: string[] = [];
    const visit = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (path !== join('src', 'policies')) visit(path);
        } else if (asked.test(readFileSync(path, 'utf8'))) offenders.push(path);
      }
    };
    visit('src');
    assert.deepEqual(offenders, []);
  });
});
