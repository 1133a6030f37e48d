// Shared helpers for the policy, limiter and store tests: threading state through a policy, asserting configuration
// errors, and a MemoryStore on a hand-moved clock.
import assert from 'node:assert/strict';
import type { MemoryStoreOptions, Policy } from '../../src/index.js';
import { fixedWindow, MemoryStore, TollgateError } from '../../src/index.js';
import type { PolicyResult } from '../../src/stores/index.js';

/** A policy with its state threaded through calls, as a store would keep it (a denial writes nothing). */
export class Run<S = unknown> {
  state: S | undefined = undefined;
  constructor(readonly policy: Policy<S>) {}

  at(nowMs: number, cost = 1): PolicyResult {
    const transition = this.policy.evaluate(this.state, nowMs, cost);
    if (!transition.result.allowed) assert.equal(transition.next, undefined, 'a denial must write nothing');
    if (transition.next !== undefined) this.state = transition.next;
    return transition.result;
  }

  /** Evaluates without keeping the new state. */
  peek(nowMs: number, cost = 1): PolicyResult {
    return this.policy.evaluate(this.state, nowMs, cost).result;
  }

  /** `n` requests of `cost` at `nowMs`; returns how many were allowed. */
  burst(nowMs: number, n: number, cost = 1): number {
    let allowed = 0;
    for (let i = 0; i < n; i++) if (this.at(nowMs, cost).allowed) allowed++;
    return allowed;
  }
}

/** The result a policy gives, as a plain object for deepEqual. */
export function result(
  allowed: boolean,
  remaining: number,
  resetMs: number,
  retryAfterMs: number,
): PolicyResult {
  return { allowed, remaining, resetMs, retryAfterMs };
}

/** Asserts `fn` throws a configuration TollgateError that names `option` (in `option` and in the message). */
export function throwsConfig(fn: () => unknown, option: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof TollgateError, `expected a TollgateError, got ${String(error)}`);
    assert.equal(error.code, 'ERR_TOLLGATE_CONFIG');
    assert.equal(error.option, option);
    assert.match(error.message, new RegExp(`\`${option}\``));
    return true;
  });
}

/** A fixed window admitting one request a minute. */
export const limitOne = () => fixedWindow({ limit: 1, windowMs: '1m' });

/** A MemoryStore on a clock the test moves by hand, with no sweep timer. */
export function manualStore(options: MemoryStoreOptions = {}) {
  const clock = { now: 0 };
  const store = new MemoryStore({ ...options, clock: () => clock.now, autoCleanup: false });
  return { clock, store };
}

/**
 * The warnings about a shared default scope emitted while `fn` runs, or only those naming `scope`. Warnings arrive
 * on a later tick, so one from an earlier test's limiters may land in the same window when files share a process.
 */
export async function sharedScopeWarningsDuring(fn: () => void, scope?: string): Promise<Error[]> {
  const seen: Error[] = [];
  const listen = (warning: Error) => seen.push(warning);
  process.on('warning', listen);
  try {
    fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listen);
  }
  return seen.filter(
    (w) =>
      (w as Error & { code?: string }).code === 'TOLLGATE_SHARED_SCOPE' &&
      (scope === undefined || w.message.includes(`"${scope}"`)),
  );
}

/** The keys a MemoryStore holds. */
export async function liveKeys(store: MemoryStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.keys()) keys.push(key);
  return keys;
}
