// The limiters, stores and routes the adapter contract's apps run on, and what its tests read back.
import { mock } from 'node:test';
import type { HeaderOptions, HeaderStyle } from '../decision/headers.js';
import { rateLimitHeaders } from '../decision/headers.js';
import type { DecisionEvent } from '../gate/options.js';
import { createLimiter, type Limiter } from '../limiter/limiter.js';
import type { AnyPolicy } from '../policies/policy.js';
import { tokenBucket } from '../policies/token-bucket.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import type { Store } from '../stores/store.js';
import { CLIENT, type ContractOptions, type RoutePlan, within } from './adapter-contract-http.js';

export const T0 = Date.UTC(2030, 0, 1);
export const CAPACITY = 3;

/** The response's rate-limit fields, lower-cased, for exact comparison with what the core computes. */
export function rateLimitFields(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => /ratelimit|retry-after/i.test(name)));
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** Units `identity` has left: a peek at cost 0 reads the balance without asking for a unit. */
export async function unitsLeft(limiter: Limiter, identity = CLIENT): Promise<number> {
  return (await limiter.peek(identity, { cost: 0 })).remaining;
}

export function silentLogger() {
  return { warn: mock.fn(), error: mock.fn() };
}

/**
 * A fixed clock, the limiter an app runs on, and a twin limiter on its own store fed the same requests: the
 * twin's decisions say which headers the app must send. Advance `now` to refill without sleeping.
 */
export function fixture() {
  const clock = { now: T0 };
  const policy = tokenBucket({ capacity: CAPACITY, refillPerSecond: 1 });
  const store = () => new MemoryStore({ clock: () => clock.now, autoCleanup: false });
  const limiter = createLimiter({ policy, store: store() });
  const twin = createLimiter({ policy, store: store() });
  const expected = async (style: HeaderStyle | false = 'draft-6', cost = 1, options: HeaderOptions = {}) =>
    lowerCased(rateLimitHeaders(await twin.consume(CLIENT, { cost }), style, options));
  return { clock, limiter, expected, logger: silentLogger() };
}

/** Re-checks the conditions tests wait for each time something they count changes. */
class Watch {
  readonly #checks = new Set<() => void>();

  changed(): void {
    for (const check of [...this.#checks]) check();
  }

  /** Resolves once `condition` holds; fails the test, saying `what`, if it has not within 5 s. */
  until(condition: () => boolean, what: string): Promise<void> {
    const met = new Promise<void>((resolve) => {
      const check = () => {
        if (!condition()) return;
        this.#checks.delete(check);
        resolve();
      };
      this.#checks.add(check);
      check();
    });
    return within(met, 5000, () => what);
  }
}

/** A MemoryStore on `clock` that counts what it applied: releases (refunds naming a lease) and refunds of units. */
function recordingStore(clock: { now: number }, watch: Watch) {
  const memory = new MemoryStore({ clock: () => clock.now, autoCleanup: false });
  const counts = { releases: 0, refunds: 0 };
  const store: Store = {
    evaluate: (storeRequest) => {
      const answer = memory.evaluate(storeRequest);
      if (storeRequest.action === 'refund') {
        if (storeRequest.lease === '') counts.refunds++;
        else counts.releases++;
        watch.changed();
      }
      return answer;
    },
    reset: (keys) => memory.reset(keys),
  };
  return { store, counts };
}

/** A route plan whose `held` requests wait in the route until `letGo`. */
export type Answering = Omit<RoutePlan, 'hold'> & { readonly held?: boolean };

/**
 * A limiter on a recording store, and a route that counts the requests it serves, how many it holds at once
 * (`inRoute`, `peak`), and the denials the gate reports. `answer` sets what the route does from now on.
 */
export function shaping(policy: AnyPolicy | readonly AnyPolicy[]) {
  const clock = { now: T0 };
  const watch = new Watch();
  const { store, counts } = recordingStore(clock, watch);
  const limiter = createLimiter({ policy, store });
  const traffic = { served: 0, denied: 0, inRoute: 0, peak: 0 };
  let answering: Answering = {};
  let letGo = () => {};
  let hold = new Promise<void>((resolve) => (letGo = resolve));
  const route = (): RoutePlan => {
    traffic.served++;
    const { held = false, ...plan } = answering;
    if (held) traffic.inRoute++;
    traffic.peak = Math.max(traffic.peak, traffic.inRoute);
    watch.changed();
    if (!held) return plan;
    return {
      ...plan,
      hold: hold.then(() => {
        traffic.inRoute--;
        watch.changed();
      }),
    };
  };
  const onDecision = (event: DecisionEvent) => {
    if (event.decision.allowed) return;
    traffic.denied++;
    watch.changed();
  };
  const logger = silentLogger();
  return {
    clock,
    store,
    counts,
    limiter,
    traffic,
    logger,
    /** The route, the logger and the denials' count, for an app that builds its own limiter. */
    observing: { logger, route, onDecision },
    options: (more: ContractOptions = {}): ContractOptions => ({
      limiter,
      logger,
      route,
      onDecision,
      ...more,
    }),
    answer: (plan: Answering) => {
      answering = plan;
    },
    /** Lets every held request go on; requests held after this wait for the next call. */
    letGo: () => {
      letGo();
      hold = new Promise<void>((resolve) => (letGo = resolve));
    },
    until: (condition: () => boolean, what: string) => watch.until(condition, what),
  };
}

/** Lets what closing an app started (the last responses' close events, their releases and refunds) run out. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}
