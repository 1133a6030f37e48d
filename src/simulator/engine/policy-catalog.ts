// The policy kinds a simulation can build: the built-in descriptions, plus any a caller brings of its own.
import { configError } from '../../core/errors.js';
import type { PolicyDescription } from '../../policies/description.js';
import { builtInPolicies } from '../../policies/index.js';

/** The descriptions by kind, built-ins first in their order (the order a wrong kind's error lists them in). */
export type PolicyCatalog = ReadonlyMap<string, PolicyDescription>;

/** Options of whatever builds policies from specs: `simulate`, `simulationWork`, `policyFromSpec`. */
export interface CatalogOptions {
  /**
   * Descriptions of policy kinds beyond the built-in ones (each policy file exports its own, such as
   * `tokenBucketDescription`), so that specs may name them. A kind may be described once.
   */
  readonly policies?: readonly PolicyDescription[];
}

const BUILT_IN: PolicyCatalog = new Map(
  builtInPolicies.map((description) => [description.kind, description]),
);

/** The built-in catalog with `extra` after it; throws a configuration error naming `policies` for a bad one. */
export function policyCatalog(extra?: unknown): PolicyCatalog {
  if (extra === undefined) return BUILT_IN;
  if (!Array.isArray(extra)) throw configError('policies', 'must be an array of policy descriptions', extra);
  const catalog = new Map(BUILT_IN);
  extra.forEach((description: unknown, i) => {
    if (!isDescription(description)) {
      throw configError(
        'policies',
        `entry ${i + 1} must be a policy description { kind, label, options, fields, limitLabel?, build }`,
        description,
      );
    }
    if (catalog.has(description.kind)) {
      throw configError('policies', `entry ${i + 1} describes the kind "${description.kind}" again`);
    }
    catalog.set(description.kind, description);
  });
  return catalog;
}

/** Checked as far as a value from plain JavaScript can be: the shapes the spec check and the page rely on. */
function isDescription(value: unknown): value is PolicyDescription {
  if (typeof value !== 'object' || value === null) return false;
  const { kind, label, options, fields, limitLabel, build } = value as Partial<PolicyDescription>;
  return (
    typeof kind === 'string' &&
    kind.length > 0 &&
    typeof label === 'string' &&
    strings(options) &&
    Array.isArray(fields) &&
    // A field of an option its spec may not give would make the page's every run of the kind fail.
    fields.every(
      (field: unknown) => strings(field) && field.length === 3 && options.includes(field[0] as string),
    ) &&
    (limitLabel === undefined || typeof limitLabel === 'string') &&
    typeof build === 'function'
  );
}

function strings(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
