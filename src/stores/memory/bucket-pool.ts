// MemoryStore's packed rows: each policy kind's states and times in typed arrays, rows reused when freed, and every
// kind's rows behind one small integer per bucket, its slot.
import { configError, type TollgateError } from '../../core/errors.js';
import type { AnyPolicy, PolicyKind } from '../../policies/policy.js';

/**
 * Rows per pool at most, so that a slot (a row times `KIND_SLOTS`, plus a kind) stays below 2^32 and the eviction
 * queue keeps it in 4 bytes. No process holds that many buckets of one kind: their identifiers alone would fill tens
 * of gigabytes.
 */
const MAX_ROWS = 2 ** 29;

/**
 * A kind's state is a number (`width` 1), a fixed tuple of `width` numbers, or, with `width` 0, an object kept as
 * given (the sliding window log). Beside it, each row keeps when the state is at rest, its place in the eviction
 * queue, and its table's number and identifier, so that an evicted bucket can be taken out of its table. Packed rows
 * cost 8 bytes per number and no object per bucket: on the heap a bucket object with boxed numbers cost far more
 * than its row (docs/benchmarks.md). Every array grows by doubling, together.
 */
export class BucketPool {
  /** Numbers per state (0: the state is kept as given). */
  readonly width: number;
  /** Numbers per row: the state's, then the expiry time. */
  readonly #stride: number;
  readonly #maxRows: number;
  #numbers: Float64Array;
  /** Each row's place in the eviction queue (0: none yet); a heap index, below the 2^31 rows no pool reaches. */
  #places: Int32Array;
  #tables: Int32Array;
  /** Each row's identifier, undefined while the row is free. */
  #ids: (string | undefined)[];
  readonly #objects: unknown[] = [];
  readonly #free: number[] = [];
  /** Rows handed out so far; freed ones are reused first. */
  #rows = 0;

  constructor(width: number, maxRows: number) {
    this.width = width;
    this.#stride = width + 1;
    this.#maxRows = Math.min(maxRows, MAX_ROWS);
    const capacity = Math.min(maxRows, 1024);
    this.#numbers = new Float64Array(capacity * this.#stride);
    this.#places = new Int32Array(capacity);
    this.#tables = new Int32Array(capacity);
    this.#ids = new Array(capacity);
  }

  /** A row for a bucket under `id` in the table numbered `table`. */
  allocate(table: number, id: string): number {
    let row = this.#free.pop();
    if (row === undefined) {
      if (this.#rows === this.#places.length) this.#grow();
      row = this.#rows++;
    }
    this.#tables[row] = table;
    this.#ids[row] = id;
    return row;
  }

  /** Frees a row the eviction queue no longer holds. */
  release(row: number): void {
    // Lets the collector have a freed log; the row is out of use until handed out again, and written before read.
    // Stryker disable next-line ConditionalExpression: what it changes is when memory is freed, which no test sees
    if (this.width === 0) this.#objects[row] = undefined;
    this.#ids[row] = undefined;
    this.#free.push(row);
  }

  read(row: number): unknown {
    if (this.width === 0) return this.#objects[row];
    const at = row * this.#stride;
    if (this.width === 1) return this.#numbers[at];
    const tuple: number[] = [];
    for (let i = 0; i < this.width; i++) tuple.push(this.#numbers[at + i] as number);
    return tuple;
  }

  /**
   * Returns whether the expiry moved earlier than the one it replaces (whatever a reused row last held, for a new
   * bucket), which the eviction queue needs next: a boolean, which costs nothing to return where a time, a double, is
   * boxed when the call is not inlined.
   */
  write(row: number, state: unknown, expiresAt: number): boolean {
    const at = row * this.#stride;
    const earlier = expiresAt < (this.#numbers[at + this.width] as number);
    this.#numbers[at + this.width] = expiresAt;
    if (this.width === 0) this.#objects[row] = state;
    else if (this.width === 1) this.#numbers[at] = state as number;
    else
      for (let i = 0; i < this.width; i++) this.#numbers[at + i] = (state as readonly number[])[i] as number;
    return earlier;
  }

  expiresAt(row: number): number {
    return this.#numbers[row * this.#stride + this.width] as number;
  }

  placeOf(row: number): number {
    return this.#places[row] as number;
  }

  setPlace(row: number, place: number): void {
    this.#places[row] = place;
  }

  tableOf(row: number): number {
    return this.#tables[row] as number;
  }

  /** Whether the row holds a bucket: allocated, and not released since. */
  inUse(row: number): boolean {
    return this.#ids[row] !== undefined;
  }

  idOf(row: number): string {
    return this.#ids[row] as string;
  }

  #grow(): void {
    const capacity = Math.min(this.#maxRows, this.#places.length * 2);
    // The store evicts before it inserts, so no pool ever holds more rows than it has buckets, unless one request
    // needs more buckets than the bound.
    if (capacity === this.#places.length) throw tooFewBuckets(this.#maxRows);
    const numbers = new Float64Array(capacity * this.#stride);
    numbers.set(this.#numbers);
    this.#numbers = numbers;
    const places = new Int32Array(capacity);
    places.set(this.#places);
    this.#places = places;
    const tables = new Int32Array(capacity);
    tables.set(this.#tables);
    this.#tables = tables;
    // Allocated whole, as the typed arrays are: filled one by one, an array grows by half and costs more.
    const ids = new Array<string | undefined>(capacity);
    for (let row = 0; row < this.#rows; row++) ids[row] = this.#ids[row];
    this.#ids = ids;
  }
}

/** A request needs more buckets than the bound (limiters are refused that at wire-up; a direct evaluate() is not). */
export function tooFewBuckets(maxBuckets: number): TollgateError {
  return configError('maxBuckets', `is below the buckets one request needs (${maxBuckets})`);
}

/** Kinds one store's slots can tell apart: room for 8, each kind given the next number the first time it is met. */
export const KIND_SLOTS = 8;

/**
 * One pool per kind, each bucket addressed by one small integer: its row in its kind's pool, times `KIND_SLOTS`,
 * plus its kind's index (arithmetic rather than bit shifts, so no row count overflows 32 bits). So the bucket is a
 * number in its table, and a bucket of another kind under the same key (a scope whose policy changed) is told
 * apart without reading it.
 */
export class BucketSlots {
  readonly #pools: BucketPool[] = [];
  /** Each kind's number, the index of its pool: given in the order kinds are first met. */
  readonly #kinds = new Map<PolicyKind, number>();
  readonly #maxRows: number;

  constructor(maxRows: number) {
    this.#maxRows = maxRows;
  }

  /** Gives each of the policies' kinds a pool now, so that a kind too many is refused at wire-up. */
  admit(policies: readonly AnyPolicy[]): void {
    for (const policy of policies) this.#indexOf(policy);
  }

  holds(slot: number, kind: PolicyKind): boolean {
    return slot % KIND_SLOTS === this.#kinds.get(kind);
  }

  allocate(policy: AnyPolicy, table: number, id: string): number {
    const index = this.#indexOf(policy);
    return (this.#pools[index] as BucketPool).allocate(table, id) * KIND_SLOTS + index;
  }

  release(slot: number): void {
    this.#poolOf(slot).release(rowOf(slot));
  }

  read(slot: number): unknown {
    return this.#poolOf(slot).read(rowOf(slot));
  }

  /** Returns whether the expiry moved earlier than the one it replaces. */
  write(slot: number, state: unknown, expiresAt: number): boolean {
    return this.#poolOf(slot).write(rowOf(slot), state, expiresAt);
  }

  expiresAt(slot: number): number {
    return this.#poolOf(slot).expiresAt(rowOf(slot));
  }

  /**
   * When the bucket stops holding a promise (a lease, a block, a booked wait), read from its state by `policy` (its
   * table's), as of `nowMs`; `nowMs` when it holds none. Rows keep no time for it: it is asked for rarely (by the
   * eviction queue, of buckets it holds as holding one, and when evicting), and a promise never outlives the state.
   */
  heldUntil(slot: number, policy: AnyPolicy, nowMs: number): number {
    // Another kind's bucket left in the table (a scope whose policy changed) holds nothing this policy can tell.
    if (policy.heldMs === undefined || !this.holds(slot, policy.kind)) return nowMs;
    return Math.min(nowMs + policy.heldMs(this.read(slot), nowMs), this.expiresAt(slot));
  }

  placeOf(slot: number): number {
    return this.#poolOf(slot).placeOf(rowOf(slot));
  }

  setPlace(slot: number, place: number): void {
    this.#poolOf(slot).setPlace(rowOf(slot), place);
  }

  tableOf(slot: number): number {
    return this.#poolOf(slot).tableOf(rowOf(slot));
  }

  inUse(slot: number): boolean {
    return this.#poolOf(slot).inUse(rowOf(slot));
  }

  idOf(slot: number): string {
    return this.#poolOf(slot).idOf(rowOf(slot));
  }

  #indexOf({ kind, stateWidth }: AnyPolicy): number {
    const known = this.#kinds.get(kind);
    if (known !== undefined) {
      // One pool per kind: a state packed otherwise would be read back as another.
      if ((this.#pools[known] as BucketPool).width !== stateWidth)
        throw configError(
          'policy',
          `of kind "${kind}" packs its state unlike another of its kind`,
          stateWidth,
        );
      return known;
    }
    const index = this.#pools.length;
    if (index === KIND_SLOTS) {
      throw configError(
        'policy',
        `is of a kind too many: a MemoryStore holds at most ${KIND_SLOTS} kinds`,
        kind,
      );
    }
    this.#pools.push(new BucketPool(stateWidth, this.#maxRows));
    this.#kinds.set(kind, index);
    return index;
  }

  #poolOf(slot: number): BucketPool {
    return this.#pools[slot % KIND_SLOTS] as BucketPool;
  }
}

function rowOf(slot: number): number {
  return Math.floor(slot / KIND_SLOTS);
}
