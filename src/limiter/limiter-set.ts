// Limiters over one store, one per set of figures, for the drop-ins whose limits another library's options give.
import type { Limiter } from './limiter.js';

/**
 * A drop-in's limit may be a function of the request (express-rate-limit's `limit`, @fastify/rate-limit's `max`,
 * a throttler's `ttl`): each value met gets its limiter, made once. Functions give few values, but nothing bounds
 * them, so past `max` the set starts again (a limiter is only a policy over the store: its counts stay there).
 */
export class LimiterSet {
  readonly #made = new Map<string, Limiter>();
  readonly #max: number;

  constructor(max = 64) {
    this.#max = max;
  }

  /** The limiter made for `figures`, made now by `make` the first time. */
  for(figures: string, make: () => Limiter): Limiter {
    let limiter = this.#made.get(figures);
    if (limiter === undefined) {
      limiter = make();
      if (this.#made.size >= this.#max) this.#made.clear();
      this.#made.set(figures, limiter);
    }
    return limiter;
  }
}

/**
 * A key another library takes, as the identifier Tollgate counts it under: its string form (a numeric user id
 * counts as its digits), and the empty key, which those libraries count like any other, as "\u0000", which no
 * key taken from a request carries.
 */
export function foreignKey(key: unknown): string {
  const text = String(key);
  return text === '' ? '\u0000' : text;
}
