// Random option objects, malformed at random: every factory either builds something that decides, or throws a
// configuration error naming the option at fault. Nothing is refused later, on a request.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { createGate } from '../../src/gate/index.js';
import {
  type AnyPolicy,
  createLimiter,
  fixedWindow,
  MemoryStore,
  slidingWindow,
  slidingWindowCounter,
  TollgateError,
  tokenBucket,
} from '../../src/index.js';

const anything = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    -1,
    0,
    0.5,
    1.5,
    1e-300,
    1e300,
    2 ** 31,
    '',
    '1s',
    '10x',
    'a b',
    null,
    true,
    [],
    {},
  ),
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -5, max: 100 }),
  fc.double({ noNaN: false }),
);
/** Mostly absent or sound, sometimes anything at all. */
const either = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 4 },
    { arbitrary: good, weight: 4 },
    { arbitrary: anything, weight: 1 },
  );
/** A required option: mostly sound, sometimes anything (or missing). */
const required = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: good, weight: 12 }, { arbitrary: anything, weight: 1 }, fc.constant(undefined));
const present = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
const options = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(fields, { requiredKeys: [] }).map(present);

const windowOptions = options({
  limit: required(fc.integer({ min: 0, max: 50 })),
  windowMs: required(fc.constantFrom(1, 1000, '10s', '1d')),
  name: either(fc.constantFrom('a', 'daily')),
});
/** The factories, taking whatever the test generates: checking it is their job. */
const FACTORIES = { tokenBucket, fixedWindow, slidingWindow, slidingWindowCounter } as unknown as Record<
  string,
  (options: object) => AnyPolicy
>;
/** A policy to build: its factory's name and options, malformed at random. */
const policySpec = fc.oneof(
  fc.tuple(
    fc.constant('tokenBucket'),
    options({
      capacity: either(fc.integer({ min: 0, max: 50 })),
      refillPerSecond: either(fc.constantFrom(0, 0.5, 1, 1000)),
      requestsPerMinute: required(fc.integer({ min: 0, max: 600 })),
      name: either(fc.constantFrom('b', 'burst')),
    }),
  ),
  fc.tuple(fc.constantFrom('fixedWindow', 'slidingWindow', 'slidingWindowCounter'), windowOptions),
);
const storeOptions = options({
  maxBuckets: either(fc.constantFrom(1, 2, 3, 100)),
  cleanupIntervalMs: either(fc.constantFrom(1000, '1m')),
  inactiveAfterMs: either(fc.constantFrom('1h', '30d')),
}).map((given) => ({ ...given, autoCleanup: false }));

function configErrorOrThrow(error: unknown): void {
  assert.ok(error instanceof TollgateError, `not a TollgateError: ${String(error)}`);
  assert.equal(error.code, 'ERR_TOLLGATE_CONFIG', error.message);
  assert.ok(error.option !== undefined && error.message.includes(`\`${error.option}\``), error.message);
}

it('policies, MemoryStore and createLimiter: built and deciding, or refused with ERR_TOLLGATE_CONFIG', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(policySpec, { minLength: 1, maxLength: 3 }),
      storeOptions,
      either(fc.integer({ min: 1, max: 5 })),
      either(fc.constantFrom('api', 'a.b')),
      async (specs, store, cost, scope) => {
        let limiter: ReturnType<typeof createLimiter>;
        let memory: MemoryStore;
        try {
          // Distinct names unless the options give one: duplicates are refused, which would hide the rest.
          const policies = specs.map(([factory, given], index) =>
            (FACTORIES[factory] as (options: object) => AnyPolicy)({ name: `p${index}`, ...given }),
          );
          memory = new MemoryStore(store);
          limiter = createLimiter(present({ policy: policies, store: memory, cost, scope }) as never);
        } catch (error) {
          configErrorOrThrow(error);
          return;
        }
        for (const client of ['a', 'b', 'a', 'c']) {
          const decision = await limiter.consume(client);
          assert.equal(typeof decision.allowed, 'boolean');
          assert.ok(Number.isInteger(decision.remaining) && decision.remaining >= 0);
        }
        assert.ok(
          memory.size <= ((store as { maxBuckets?: number }).maxBuckets ?? 100_000),
          'maxBuckets holds',
        );
      },
    ),
    { numRuns: 500 },
  );
});

it('adapter options (the gate): built and answering, or refused with ERR_TOLLGATE_CONFIG', async () => {
  const gateOptions = fc
    .record(
      {
        requestsPerMinute: either(fc.integer({ min: 0, max: 100 })),
        capacity: either(fc.integer({ min: 0, max: 100 })),
        cost: either(fc.integer({ min: 1, max: 3 })),
        statusCode: either(fc.constantFrom(429, 503)),
        headers: either(fc.constantFrom(true, false, 'draft-6', 'draft-7', 'draft-8', 'draft-10', 'draft-9')),
        legacyHeaders: either(fc.constantFrom(true, false, 'yes')),
        legacyReset: either(fc.constantFrom('iso-8601', 'epoch-seconds', 'unix')),
        message: either(fc.constantFrom('slow down', { error: 'x' })),
        shadow: either(fc.boolean()),
        failOpen: either(fc.boolean()),
        unidentified: either(fc.constantFrom('shared', 'reject')),
        scope: either(fc.constantFrom('gate', 'g.1')),
      },
      { requiredKeys: [] },
    )
    .map(present);
  await fc.assert(
    fc.asyncProperty(gateOptions, async (given) => {
      let gate: ReturnType<typeof createGate<string>>;
      try {
        gate = createGate<string>(
          { ...given, store: new MemoryStore({ autoCleanup: false }), logger: { warn() {}, error() {} } },
          { name: 'rateLimit', identifier: (req) => req },
        );
      } catch (error) {
        configErrorOrThrow(error);
        return;
      }
      for (const req of ['1.2.3.4', '1.2.3.4', '']) {
        const outcome = await gate.check(req);
        assert.notEqual(outcome.action === 'fail' && outcome.status, 500, 'a request never fails on options');
      }
    }),
    { numRuns: 400 },
  );
});
