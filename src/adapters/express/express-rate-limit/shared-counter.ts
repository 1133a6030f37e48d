// Which limiters count on one Tollgate counter (a store and a prefix), and the warning when their windows disagree.
import type { Options } from './types.js';
import { ValidationError } from './validations.js';

/** What a limiter counts for: one counter serves limiters that agree on both. */
type Claim = Pick<Options, 'limit' | 'windowMs'>;

/**
 * Per Tollgate store, per prefix: the first limiter's claim, the object its app passed as `store`, and whether a
 * clash was already reported.
 */
const claims = new WeakMap<object, Map<string, { claim: Claim; passed: object; reported: boolean }>>();

const SHARED_COUNTER = 'TOLLGATE_SHARED_COUNTER';

/**
 * Records that a limiter counts on (`store`, `prefix`), and returns the warning to report when an earlier one counts
 * there with another limit or window: both then spend from and reset one count, which neither meant. Said once per
 * counter, and not when both were given one object as `store` (`passed`): the store-reuse check reports that.
 */
export function claimCounter(
  store: object,
  prefix: string,
  claim: Claim,
  passed: object,
): ValidationError | undefined {
  let prefixes = claims.get(store);
  if (prefixes === undefined) {
    prefixes = new Map();
    claims.set(store, prefixes);
  }
  const first = prefixes.get(prefix);
  if (first === undefined) {
    prefixes.set(prefix, { claim, passed, reported: false });
    return undefined;
  }
  if (first.reported || first.passed === passed) return undefined;
  if (first.claim.limit === claim.limit && first.claim.windowMs === claim.windowMs) return undefined;
  first.reported = true;
  return new ValidationError(
    SHARED_COUNTER,
    `Two rate limiters count on one counter (the ${store.constructor.name} with prefix "${prefix}"): one ` +
      `allows ${described(first.claim)}, the other ${described(claim)}, so each request to either spends from ` +
      "the same count. Give each its own prefix: store: tollgateStore(store, { prefix: 'login:' }) from " +
      "'tollgate/express-rate-limit'.",
    false,
  );
}

function described({ limit, windowMs }: Claim): string {
  const hits = typeof limit === 'function' ? 'a limit function' : String(limit);
  return `${hits} per ${windowMs} ms`;
}
