// The memory store's tables by number, with the policy each holds buckets of: a bucket's row names its table in 4
// bytes, so that an evicted bucket can be taken out of it (an array of references per row cost ~10 bytes a bucket
// more, measured with bench/heap.ts), and what its state holds can be asked of its policy.
import type { AnyPolicy } from '../../policies/policy.js';

/** Numbers given to tables while they exist, and reused once a table is dropped. */
export class TableNumbers<T extends object> {
  readonly #tables: (T | undefined)[] = [];
  readonly #policies: (AnyPolicy | undefined)[] = [];
  readonly #numbers = new Map<T, number>();
  readonly #free: number[] = [];

  /**
   * The table's number, given the first time it is asked for, and from now on `policy` is the table's: the one its
   * latest bucket was made for (a table is one scope's buckets of one policy; only a scope shared by limiters of
   * unlike policies has two).
   */
  of(table: T, policy: AnyPolicy): number {
    let number = this.#numbers.get(table);
    if (number === undefined) {
      number = this.#free.pop() ?? this.#tables.length;
      this.#tables[number] = table;
      this.#numbers.set(table, number);
    }
    this.#policies[number] = policy;
    return number;
  }

  /** The table holding `number` (only asked of a number given and not freed since). */
  table(number: number): T {
    return this.#tables[number] as T;
  }

  /** The policy of the table holding `number`. */
  policy(number: number): AnyPolicy {
    return this.#policies[number] as AnyPolicy;
  }

  /** Frees a dropped table's number; a table never numbered has none to free. */
  drop(table: T): void {
    const number = this.#numbers.get(table);
    if (number === undefined) return;
    this.#numbers.delete(table);
    this.#tables[number] = undefined;
    this.#policies[number] = undefined;
    this.#free.push(number);
  }
}
