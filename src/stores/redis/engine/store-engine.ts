// The engine one RedisStore runs, and each of its limiters' arguments that do not change from call to call.
import type { StoreAction } from '../../../policies/evaluate.js';
import type { AnyPolicy } from '../../../policies/policy.js';
import { constantArguments } from './call-format.js';
import { BUILT_IN_ENGINE, type Engine, withTwins } from './engine.js';

export class StoreEngine {
  /** The built-in engine, extended by the twin of any other kind a limiter of the store brings. */
  #engine: Engine = BUILT_IN_ENGINE;
  readonly #ttlMs: readonly number[];
  /** Per limiter (its policies array is its own) and action: ARGV up to the first request's. */
  readonly #constant = new WeakMap<readonly AnyPolicy[], Map<StoreAction, readonly string[]>>();

  constructor(ttlMs: readonly number[]) {
    this.#ttlMs = ttlMs;
  }

  get current(): Engine {
    return this.#engine;
  }

  /** Takes the twins of the policies' kinds now, at wire-up, so that a twin refused is refused there. */
  admit(policies: readonly AnyPolicy[]): void {
    this.#engine = withTwins(this.#engine, policies);
  }

  /** A call's arguments up to its first request; a limiter never admitted (a direct caller) is admitted now. */
  constantArguments(policies: readonly AnyPolicy[], action: StoreAction): readonly string[] {
    let byAction = this.#constant.get(policies);
    if (byAction === undefined) {
      this.admit(policies);
      byAction = new Map();
      this.#constant.set(policies, byAction);
    }
    let args = byAction.get(action);
    if (args === undefined) {
      args = constantArguments(policies, this.#ttlMs, action);
      byAction.set(action, args);
    }
    return args;
  }
}
