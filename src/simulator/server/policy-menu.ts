// GET /api/policies: the policy kinds the page offers, each as its description presents it, served to build the forms.
import { inContext, TollgateError } from '../../core/errors.js';
import type { PolicyDescription, PolicyField } from '../../policies/description.js';
import type { AnyPolicy } from '../../policies/policy.js';
import type { PolicyCatalog } from '../engine/policy-catalog.js';

/** One kind of the page's menu: what its policy card shows, and what the page must know before a run. */
export interface PolicyMenuEntry {
  readonly kind: string;
  readonly label: string;
  readonly fields: readonly PolicyField[];
  readonly limitLabel?: string;
  /** Its requests hold slots until they end, so the page asks how long each takes (the scenario's `service`). */
  readonly leased: boolean;
}

/**
 * The catalog in its order, as the page reads it. Throws a configuration error naming `policies` when a kind's form
 * defaults do not build a policy: the page's every run of that kind would fail.
 */
export function policyMenu(catalog: PolicyCatalog): readonly PolicyMenuEntry[] {
  return [...catalog.values()].map((description) => {
    const { kind, label, fields, limitLabel } = description;
    return {
      kind,
      label,
      fields,
      ...(limitLabel === undefined ? {} : { limitLabel }),
      leased: formDefault(description).leased,
    };
  });
}

/** The policy a card of this kind makes before anything is typed: its kind's nature, known before any run. */
function formDefault(description: PolicyDescription): AnyPolicy {
  const options: Record<string, string | number> = {};
  for (const [option, , fallback] of description.fields) {
    const value = formValue(fallback);
    if (value !== undefined) options[option] = value;
  }
  try {
    return description.build(options);
  } catch (error) {
    if (!(error instanceof TollgateError)) throw error;
    throw inContext(
      error,
      (message) =>
        `\`policies\` must give each kind form defaults that build a policy (the ${description.kind} defaults: ${message})`,
      'policies',
    );
  }
}

/** Form text as the page sends it (forms.js's `jsonValue`): numbers as numbers, blank left out, the rest as text. */
function formValue(raw: string): string | number | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}
