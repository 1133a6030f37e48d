// Policies as plain JSON: a spec names its kind and the factory's options, and is built by its kind's description.
import { configError } from '../../core/errors.js';
import { knownKeys, oneOf } from '../../core/validate.js';
import type { ConcurrencyOptions } from '../../policies/concurrency.js';
import type { PolicyDescription } from '../../policies/description.js';
import type { AnyPolicy } from '../../policies/policy.js';
import type { TokenBucketOptions } from '../../policies/token-bucket.js';
import type { WindowOptions } from '../../policies/window-options.js';
import { type CatalogOptions, type PolicyCatalog, policyCatalog } from './policy-catalog.js';

/** A built-in policy as plain JSON: the factory's options plus its `kind`. */
export type BuiltInPolicySpec =
  | ({ readonly kind: 'token-bucket' } & TokenBucketOptions)
  | ({ readonly kind: 'fixed-window' | 'sliding-window' | 'sliding-window-counter' } & WindowOptions)
  | ({ readonly kind: 'concurrency' } & ConcurrencyOptions);

/** A policy of a kind described by its caller (`CatalogOptions.policies`): its options, checked by its factory. */
export interface DescribedPolicySpec {
  readonly kind: string;
  readonly [option: string]: unknown;
}

/** A policy as plain JSON: the factory's options plus its `kind`. */
export type PolicySpec = BuiltInPolicySpec | DescribedPolicySpec;

/**
 * Builds a policy from its JSON description with its kind's own factory, so its errors are the factory's. Specs
 * may name the built-in kinds and those of `options.policies`.
 */
export function policyFromSpec(spec: PolicySpec, options: CatalogOptions = {}): AnyPolicy {
  return buildPolicy(spec, policyCatalog(options.policies));
}

/** `policyFromSpec` over a catalog already checked. */
export function buildPolicy(spec: PolicySpec, catalog: PolicyCatalog): AnyPolicy {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw configError('policy', 'must be an object such as { "kind": "fixed-window", ... }', spec);
  }
  const kind = oneOf('kind', spec.kind, [...catalog.keys()]);
  const description = catalog.get(kind) as PolicyDescription;
  knownKeys(`a ${kind} policy`, spec, ['kind', ...description.options]);
  const { kind: _, ...options } = spec;
  return description.build(options);
}
