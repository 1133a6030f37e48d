// What each test of the store contract is given, and how the contract's tables of tests become node:test tests.
import { it } from 'node:test';
import type { Decision } from '../decision/decision.js';
import { createLimiter, type Limiter, type LimiterOptions } from '../limiter/limiter.js';
import {
  type AnyPolicy,
  fixedWindow,
  slidingWindow,
  slidingWindowCounter,
  tokenBucket,
} from '../policies/index.js';
import type { Store } from '../stores/store.js';
import type { TestClock } from './test-clock.js';

export interface StoreFixture {
  readonly store: Store;
  close(): Promise<void>;
  /** For stores whose keys expire on their own: a bucket key's TTL in ms (-1: none), as the server reports it. */
  pttl?(key: string): Promise<number>;
}

/** The store under test, made on first use, and the clock it reads. */
export interface StoreContext {
  readonly clock: TestClock;
  fixture(): Promise<StoreFixture>;
  store(): Promise<Store>;
  /** A scope no other test uses, so that tests sharing the store never share a bucket. */
  scope(): string;
  /** A limiter on the store under test, in a scope of its own. */
  limiter(policy: AnyPolicy | readonly AnyPolicy[], options?: Partial<LimiterOptions>): Promise<Limiter>;
}

/** One test of the contract. */
export type StoreCase = (context: StoreContext) => Promise<void>;
/** One test run on each rate policy, given a maker of it. */
export type RateCase = (context: StoreContext, make: () => AnyPolicy) => Promise<void>;

/** One policy of each rate kind, 5 units per 10 s or so: what most of the contract runs on. */
export const RATE_POLICIES: Readonly<Record<string, () => AnyPolicy>> = {
  'token bucket': () => tokenBucket({ capacity: 5, refillPerSecond: 1 }),
  'fixed window': () => fixedWindow({ limit: 5, windowMs: '10s' }),
  'sliding window': () => slidingWindow({ limit: 5, windowMs: '10s' }),
  'sliding window counter': () => slidingWindowCounter({ limit: 5, windowMs: '10s' }),
};

/** The rate policy of that label (one of RATE_POLICIES'). */
export function ratePolicy(label: string): AnyPolicy {
  const make = RATE_POLICIES[label];
  if (make === undefined) throw new Error(`no rate policy is labelled ${JSON.stringify(label)}`);
  return make();
}

let scopes = 0;

/** The context of one run of the contract, and how to close its store once its tests are done (if one was made). */
export function storeContext(
  clock: TestClock,
  makeFixture: () => Promise<StoreFixture>,
): StoreContext & { close(): Promise<void> } {
  let made: Promise<StoreFixture> | undefined;
  const fixture = () => {
    made ??= makeFixture();
    return made;
  };
  const store = async () => (await fixture()).store;
  const scope = () => `contract-${process.pid}-${++scopes}`;
  const limiter = async (policy: AnyPolicy | readonly AnyPolicy[], options: Partial<LimiterOptions> = {}) =>
    createLimiter({ policy, store: await store(), scope: scope(), ...options });
  const close = async () => {
    if (made !== undefined) await (await made).close();
  };
  return { clock, fixture, store, scope, limiter, close };
}

/** Registers each case as a test of its title. */
export function register(cases: Readonly<Record<string, StoreCase>>, context: StoreContext): void {
  for (const [title, run] of Object.entries(cases)) it(title, () => run(context));
}

/** Registers each rate case as a test of its title, on the policy `make` makes. */
export function registerRate(
  cases: Readonly<Record<string, RateCase>>,
  context: StoreContext,
  make: () => AnyPolicy,
): void {
  for (const [title, run] of Object.entries(cases)) it(title, () => run(context, make));
}

/** What a client is told, without the per-policy detail. */
export function figures({ allowed, remaining, resetMs, retryAfterMs }: Decision) {
  return { allowed, remaining, resetMs, retryAfterMs };
}
