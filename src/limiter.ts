// A limiter binds policies, a store and a scope; its options are validated once, here, at wire-up.
import { type Decision, toDecision } from './decision.js';
import { configError, TollgateError } from './errors.js';
import { bucketKeys, defaultScope, encodeIdentifier, validateScope } from './key.js';
import type { AnyPolicy } from './policies/policy.js';
import { warnOnSharedDefaultScope } from './shared-scope.js';
import { sharedMemoryStore } from './stores/memory-store.js';
import { isStore, type Store, type StoreRequest, type StoreResponse } from './stores/store.js';
import { knownKeys, positiveInteger } from './validate.js';

export interface LimiterOptions {
  /** One policy, or several enforced together (a request must pass all; a denial spends from none). */
  readonly policy: AnyPolicy | readonly AnyPolicy[];
  /** Default: one in-memory store shared by every limiter that brings none. */
  readonly store?: Store;
  /** Namespaces the buckets. Default: a hash of the policies' parameters. */
  readonly scope?: string;
  /** Units a request spends unless `consume` says otherwise. Default 1. */
  readonly cost?: number;
  /** What to answer when the store is unreachable: allow (true) or reject (false). Default: the store's setting. */
  readonly failOpen?: boolean;
}

export interface ConsumeOptions {
  readonly cost?: number;
}

export interface Limiter {
  readonly scope: string;
  readonly policies: readonly AnyPolicy[];
  readonly store: Store;
  /** Spends `cost` units for `identifier` if every policy allows it. */
  consume(identifier: string, options?: ConsumeOptions): Promise<Decision>;
  /** What `consume` would answer now, without spending. */
  peek(identifier: string, options?: ConsumeOptions): Promise<Decision>;
  /** Forgets `identifier`'s state in this limiter's scope. */
  reset(identifier: string): Promise<void>;
}

const OPTIONS = ['policy', 'store', 'scope', 'cost', 'failOpen'];

export function createLimiter(options: LimiterOptions): Limiter {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  knownKeys('createLimiter', options, OPTIONS);
  const policies = validatePolicies(options.policy);
  // Only an absent store means the shared default: `null` is a mistake worth hearing about.
  const store = options.store === undefined ? sharedMemoryStore() : options.store;
  if (!isStore(store))
    throw configError('store', 'must implement evaluate() and reset() (a MemoryStore or RedisStore)');
  store.checkPolicies?.(policies);
  const scope = options.scope === undefined ? defaultScope(policies) : validateScope(options.scope);
  const defaultCost = positiveInteger('cost', options.cost ?? 1);
  const failOpen = options.failOpen;
  if (failOpen !== undefined && typeof failOpen !== 'boolean')
    throw configError('failOpen', 'must be a boolean', failOpen);
  const tightest = Math.min(...policies.map((p) => p.limit));
  // A limit of 0 is a deliberate "reject everything"; any other limit below the cost is a mistake.
  if (tightest > 0 && defaultCost > tightest) {
    throw configError('cost', `must not exceed the policy's limit (${tightest})`, defaultCost);
  }
  // Last, so that only a limiter that is really created counts.
  if (options.scope === undefined) warnOnSharedDefaultScope(store, scope, policies);

  const run = async (identifier: string, consumeOptions: ConsumeOptions | undefined, dryRun: boolean) => {
    const cost = consumeOptions?.cost ?? defaultCost;
    if (!Number.isSafeInteger(cost) || cost < 0) {
      throw new TollgateError(
        'ERR_TOLLGATE_ARGUMENT',
        `the cost must be a non-negative integer (received ${cost})`,
      );
    }
    const id = encodeIdentifier(identifier);
    const request: StoreRequest =
      failOpen === undefined
        ? { scope, id, policies, cost, dryRun }
        : { scope, id, policies, cost, dryRun, failOpen };
    const response = store.evaluate(request);
    // An in-process store answers synchronously: awaiting it anyway would cost a turn of the microtask queue.
    return toDecision(policies, isPromise(response) ? await response : response);
  };

  return {
    scope,
    policies,
    store,
    consume: (identifier, consumeOptions) => run(identifier, consumeOptions, false),
    peek: (identifier, consumeOptions) => run(identifier, consumeOptions, true),
    reset: async (identifier) => {
      await store.reset(bucketKeys(scope, identifier, policies));
    },
  };
}

function validatePolicies(policy: LimiterOptions['policy'] | undefined): readonly AnyPolicy[] {
  const policies = Array.isArray(policy)
    ? (policy as readonly AnyPolicy[])
    : policy === undefined
      ? []
      : [policy as AnyPolicy];
  if (policies.length === 0)
    throw configError('policy', 'is required: a policy such as tokenBucket({...}), or an array of them');
  for (const p of policies) {
    if (typeof p?.evaluate !== 'function' || typeof p.kind !== 'string') {
      throw configError(
        'policy',
        'must be created by tokenBucket(), fixedWindow(), slidingWindow() or slidingWindowCounter()',
      );
    }
  }
  const names = new Set(policies.map((p) => p.name));
  if (names.size !== policies.length)
    throw configError('policy', 'names must be unique within a limiter (set `name`)');
  return policies;
}

function isPromise(response: StoreResponse | Promise<StoreResponse>): response is Promise<StoreResponse> {
  return typeof (response as Partial<Promise<StoreResponse>>).then === 'function';
}
