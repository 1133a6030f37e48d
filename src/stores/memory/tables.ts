// The memory store's tables, each one policy's buckets in one scope, and their numbers: a bucket's row names its
// table in 4 bytes, so that an evicted bucket can be taken out of it (an array of references per row cost more heap
// per bucket: docs/benchmarks.md), and what its state holds can be asked of its policy.
import type { AnyPolicy } from '../../policies/policy.js';

/**
 * One policy's buckets in one scope: identifier -> slot, found by scope, member and identifier, strings the caller
 * holds, so that no lookup hashes a key joined for the occasion (once a decision's largest cost: docs/benchmarks.md).
 */
export type Table = Map<string, number>;
/** The table key of a policy that is alone in its limiter (its bucket key has no member). */
// Stryker disable next-line StringLiteral: any string that no policy name can be would do
export const ALONE = '';

/** The table of `member` in `scope`, made (with its scope's tables) when missing; no closure per new bucket. */
export function tableIn(scopes: Map<string, Map<string, Table>>, scope: string, member: string): Table {
  let tables = scopes.get(scope);
  if (tables === undefined) {
    tables = new Map();
    scopes.set(scope, tables);
  }
  let table = tables.get(member);
  if (table === undefined) {
    table = new Map();
    tables.set(member, table);
  }
  return table;
}

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
