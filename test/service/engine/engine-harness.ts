// What the decision engine's tests share: a clock, a store per test, a recording observer, a request helper.
import { createDecider, type Decider } from '../../../src/service/engine/decider.js';
import type { DescriptorOutcome, ServiceObserver } from '../../../src/service/engine/observer.js';
import type { RateLimitDescriptor, RateLimitResponse } from '../../../src/service/protocol/messages.js';
import type { Store } from '../../../src/stores/store.js';
import type { stubConfig } from './stub-config.js';

/** A minute's window opens at T0; requests arrive 2 s into it, so every minute's window ends 58 s later. */
export const T0 = 1_800_000_000_000;

export interface StoreUnderTest {
  readonly store: Store;
  close(): Promise<void>;
}

/** Makes a store on the given clock, isolated from every other test's. */
export type StoreMaker = (clock: () => number) => Promise<StoreUnderTest>;

export interface Recorder extends ServiceObserver {
  readonly outcomes: DescriptorOutcome[];
  storeErrors: number;
}

export function recorder(): Recorder {
  const record: Recorder = {
    outcomes: [],
    storeErrors: 0,
    descriptor: (outcome) => record.outcomes.push(outcome),
    request: () => {},
    storeError: () => {
      record.storeErrors++;
    },
  };
  return record;
}

/** A response's headers as a plain record. */
export function headersOf(response: RateLimitResponse): Record<string, string> {
  return Object.fromEntries(response.responseHeadersToAdd.map(({ key, value }) => [key, value]));
}

export interface EngineKit {
  /** The stores' clock: each `open` puts it back to 2 s into the window opened at T0. */
  readonly clock: { now: number };
  open(): Promise<{ decider: Decider; observer: Recorder; close(): Promise<void> }>;
  /** One request to domain `domain`, without request-level hits. */
  ask(
    decider: Decider,
    config: ReturnType<typeof stubConfig>,
    ...descriptors: RateLimitDescriptor[]
  ): Promise<RateLimitResponse>;
}

export function engineKit(makeStore: StoreMaker): EngineKit {
  const clock = { now: T0 + 2000 };
  return {
    clock,
    open: async () => {
      clock.now = T0 + 2000;
      const { store, close } = await makeStore(() => clock.now);
      const observer = recorder();
      return { decider: createDecider({ store, observer }), observer, close };
    },
    ask: (decider, config, ...descriptors) =>
      decider.shouldRateLimit(config, { domain: 'domain', descriptors, hitsAddend: 0 }),
  };
}
