// Shared helpers for the policy tests: threading state through a policy, and asserting configuration errors.
import assert from 'node:assert/strict';
import type { Policy, PolicyResult } from '../../src/index.js';
import { TollgateError } from '../../src/index.js';

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
