// How a policy kind presents itself to the simulator: its options as JSON, its form on the page, and its factory.
import type { AnyPolicy, PolicyKind } from './policy.js';

/** One input of the page's form: the option it sets, its label, and its default as a user would type it. */
export type PolicyField = readonly [option: string, label: string, fallback: string];

/**
 * A policy kind as the simulator offers it, so that a kind of one's own is simulated and offered on the page with
 * no edit outside its file: the simulator reads kinds from descriptions, never by name.
 */
export interface PolicyDescription {
  readonly kind: PolicyKind;
  /** Names the kind on the page, e.g. 'Token bucket'. */
  readonly label: string;
  /** The options a JSON spec of this kind may give besides `kind`: any other is refused before the factory runs. */
  readonly options: readonly string[];
  /** The page's form for a spec of this kind, in order; an empty default leaves the option out. */
  readonly fields: readonly PolicyField[];
  /** What the chart calls the policy's limit ('capacity', 'max in flight'); 'limit' when absent. */
  readonly limitLabel?: string;
  /** The kind's own factory over a spec's options (its `kind` taken off), so its errors are the factory's. */
  build(options: Readonly<Record<string, unknown>>): AnyPolicy;
}
