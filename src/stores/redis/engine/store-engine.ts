// The engine one RedisStore runs, and each of its limiters' arguments that do not change from call to call.
import type { StoreAction } from '../../../policies/evaluate.js';
import type { AnyPolicy } from '../../../policies/policy.js';
import { callSpec } from './call-format.js';
import { BUILT_IN_ENGINE, type Engine, withTwins } from './engine.js';

export class StoreEngine {
  /** The built-in engine, extended by the twin of any other kind a limiter of the store brings. */
  #engine: Engine = BUILT_IN_ENGINE;
  readonly #ttlMs: readonly number[];
  /** Per limiter (its policies array is its own) and action: its spec (call-format.ts). */
  readonly #specs = new WeakMap<readonly AnyPolicy[], Map<StoreAction, string>>();

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

  /** A limiter's spec for `action`; a limiter never admitted (a direct caller) is admitted now. */
  spec(policies: readonly AnyPolicy[], action: StoreAction): string {
    let byAction = this.#specs.get(policies);
    if (byAction === undefined) {
      this.admit(policies);
      byAction = new Map();
      this.#specs.set(policies, byAction);
    }
    let spec = byAction.get(action);
    if (spec === undefined) {
      spec = callSpec(policies, this.#ttlMs, action);
      byAction.set(action, spec);
    }
    return spec;
  }
}
