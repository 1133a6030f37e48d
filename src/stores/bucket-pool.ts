// MemoryStore's packed rows: each policy kind's states and expiry times in typed arrays, rows reused when freed, and
// every kind's rows behind one small integer per bucket, its slot.
import { configError } from '../errors.js';
import type { PolicyKind } from '../policies/policy.js';

/**
 * A kind's state is a number (`width` 1), a fixed tuple of `width` numbers, or, with `width` 0, an object kept as
 * given (the sliding window log). Packed rows cost 8 bytes per number and no object per bucket: on the heap a
 * bucket object with boxed numbers cost ~100 bytes more than its row (measured in bench/).
 */
export class BucketPool {
  readonly #width: number;
  /** Numbers per row: the state's, then the expiry time. */
  readonly #stride: number;
  readonly #maxRows: number;
  #numbers: Float64Array;
  /** Set when a row is read; cleared when the eviction hand passes it (second chance). */
  #used: Uint8Array;
  readonly #objects: unknown[] = [];
  readonly #free: number[] = [];
  /** Rows handed out so far; freed ones are reused first. */
  #rows = 0;

  constructor(width: number, maxRows: number) {
    this.#width = width;
    this.#stride = width + 1;
    this.#maxRows = maxRows;
    const capacity = Math.min(maxRows, 1024);
    this.#numbers = new Float64Array(capacity * this.#stride);
    this.#used = new Uint8Array(capacity);
  }

  allocate(): number {
    const row = this.#free.pop();
    if (row !== undefined) return row;
    if (this.#rows === this.#used.length) this.#grow();
    return this.#rows++;
  }

  release(row: number): void {
    // Only lets the collector have a freed log: a freed row is written again before it is read, and a numeric pool
    // has no objects.
    // Stryker disable next-line ConditionalExpression: what it changes is when memory is freed, which no test sees
    if (this.#width === 0) this.#objects[row] = undefined;
    this.#used[row] = 0;
    this.#free.push(row);
  }

  /** The row's state, and a mark that it was used. */
  read(row: number): unknown {
    this.#used[row] = 1;
    if (this.#width === 0) return this.#objects[row];
    const at = row * this.#stride;
    if (this.#width === 1) return this.#numbers[at];
    const tuple: number[] = [];
    for (let i = 0; i < this.#width; i++) tuple.push(this.#numbers[at + i] as number);
    return tuple;
  }

  write(row: number, state: unknown, expiresAt: number): void {
    const at = row * this.#stride;
    this.#numbers[at + this.#width] = expiresAt;
    if (this.#width === 0) this.#objects[row] = state;
    else if (this.#width === 1) this.#numbers[at] = state as number;
    else
      for (let i = 0; i < this.#width; i++) this.#numbers[at + i] = (state as readonly number[])[i] as number;
  }

  expiresAt(row: number): number {
    return this.#numbers[row * this.#stride + this.#width] as number;
  }

  /** True (once) when the row was read since the last call: it gets a second chance instead of eviction. */
  takeSecondChance(row: number): boolean {
    const used = this.#used[row] === 1;
    this.#used[row] = 0;
    return used;
  }

  #grow(): void {
    const capacity = Math.min(this.#maxRows, this.#used.length * 2);
    // The store evicts before it inserts, so no pool ever holds more rows than it has buckets, unless one request
    // needs more buckets than the bound (limiters are refused that at wire-up; a direct evaluate() is not).
    if (capacity === this.#used.length)
      throw configError('maxBuckets', `is below the buckets one request needs (${this.#maxRows})`);
    const numbers = new Float64Array(capacity * this.#stride);
    numbers.set(this.#numbers);
    this.#numbers = numbers;
    const used = new Uint8Array(capacity);
    used.set(this.#used);
    this.#used = used;
  }
}

/** The numbers in each kind's state (see the policies' state types); 0 keeps the state as given. */
const WIDTHS = {
  'token-bucket': 1,
  'fixed-window': 2,
  'sliding-window-counter': 3,
  'sliding-window': 0,
  concurrency: 0,
  lockout: 1,
} as const satisfies Record<PolicyKind, number>;
export const KINDS = Object.keys(WIDTHS) as PolicyKind[];
const KIND_INDEX = Object.fromEntries(KINDS.map((kind, index) => [kind, index])) as Record<
  PolicyKind,
  number
>;

/** Kinds a slot can name: room for 8, checked by the pool's tests as kinds are added. */
export const KIND_SLOTS = 8;

/**
 * One pool per kind, each bucket addressed by one small integer: its row in its kind's pool, times `KIND_SLOTS`,
 * plus its kind's index (arithmetic rather than bit shifts, so no row count overflows 32 bits). So the bucket is a
 * number in its table, and a bucket of another kind under the same key (a scope whose policy changed) is told
 * apart without reading it.
 */
export class BucketSlots {
  readonly #pools: BucketPool[];

  constructor(maxRows: number) {
    this.#pools = KINDS.map((kind) => new BucketPool(WIDTHS[kind], maxRows));
  }

  holds(slot: number, kind: PolicyKind): boolean {
    return slot % KIND_SLOTS === KIND_INDEX[kind];
  }

  allocate(kind: PolicyKind): number {
    const index = KIND_INDEX[kind];
    return (this.#pools[index] as BucketPool).allocate() * KIND_SLOTS + index;
  }

  release(slot: number): void {
    this.#poolOf(slot).release(rowOf(slot));
  }

  /** The bucket's state, and a mark that it was used. */
  read(slot: number): unknown {
    return this.#poolOf(slot).read(rowOf(slot));
  }

  write(slot: number, state: unknown, expiresAt: number): void {
    this.#poolOf(slot).write(rowOf(slot), state, expiresAt);
  }

  expiresAt(slot: number): number {
    return this.#poolOf(slot).expiresAt(rowOf(slot));
  }

  takeSecondChance(slot: number): boolean {
    return this.#poolOf(slot).takeSecondChance(rowOf(slot));
  }

  #poolOf(slot: number): BucketPool {
    return this.#pools[slot % KIND_SLOTS] as BucketPool;
  }
}

function rowOf(slot: number): number {
  return Math.floor(slot / KIND_SLOTS);
}
