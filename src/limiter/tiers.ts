// Tiers: the limiter is chosen per request (a plan, an account type), each tier in its own scope.
import { argumentError, configError } from '../core/errors.js';
import type { Limiter } from './limiter.js';

export interface Tiers<Req> {
  /** The request's tier: a name in `limiters`, or undefined for the gate's own limiter. */
  readonly resolve: (req: Req) => string | undefined | Promise<string | undefined>;
  /** One limiter per tier, each with a scope of its own. */
  readonly limiters: Readonly<Record<string, Limiter>>;
}

/**
 * A function from a request to the limiter that decides it. Scopes must differ: two tiers sharing buckets
 * would spend each other's quota.
 */
export function tierSelector<Req>(base: Limiter, tiers: Tiers<Req>): (req: Req) => Promise<Limiter> {
  if (typeof tiers !== 'object' || tiers === null || typeof tiers.resolve !== 'function')
    throw configError('tiers', 'must be { resolve(req), limiters: { name: limiter } }', tiers);
  const entries = Object.entries(tiers.limiters ?? {});
  if (entries.length === 0) throw configError('tiers', 'must name at least one tier in `limiters`');
  const scopes = new Set([base.scope]);
  for (const [name, limiter] of entries) {
    if (typeof limiter?.consume !== 'function')
      throw configError('tiers', `limiter "${name}" must come from createLimiter()`);
    if (scopes.has(limiter.scope))
      throw configError(
        'tiers',
        `limiter "${name}" needs a scope of its own (scope "${limiter.scope}" is taken)`,
      );
    scopes.add(limiter.scope);
  }
  const byName = new Map(entries);
  return async (req) => {
    const tier = await tiers.resolve(req);
    if (tier === undefined) return base;
    const limiter = byName.get(tier);
    if (limiter === undefined) {
      throw argumentError(
        `tiers.resolve returned ${JSON.stringify(tier)}, which is not one of ${[...byName.keys()].join(', ')}`,
      );
    }
    return limiter;
  };
}
