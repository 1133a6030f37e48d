// A binary min-heap of bucket slots by time over typed arrays, each slot's index kept in the slot's own row: any slot
// can be moved or taken out in O(log n), with no object per entry and no stale entry left behind.

/** Where each slot's place in the queue is kept (its row, beside its state); 0 for none. */
export interface SlotPlaces {
  placeOf(slot: number): number;
  setPlace(slot: number, place: number): void;
}

/**
 * A place is the slot's index plus one, signed by the heap holding it (the eviction queue keeps two), so one integer
 * per row says whether, where and in which heap a slot is queued. A slot pushed at the top's time goes on top, above
 * it: of two window buckets at rest at the same instant the newer has most likely counted fewer requests, and a flood
 * of new clients, each pushed just before room is made, evicts its own buckets rather than one held for longer (a
 * client hammering its limit in the same window, or a bucket that never rests).
 */
export class SlotHeap {
  /** Times and slots, in heap order: 12 bytes an entry (slots stay below 2^32: see `MAX_ROWS` in bucket-pool.ts). */
  #times: Float64Array;
  #slots: Uint32Array;
  #size = 0;
  readonly #places: SlotPlaces;
  readonly #sign: 1 | -1;
  /** The most slots it can be asked to hold: the store's bound on buckets. */
  readonly #maxSize: number;

  constructor(places: SlotPlaces, sign: 1 | -1, maxSize: number) {
    this.#places = places;
    this.#sign = sign;
    this.#maxSize = maxSize;
    this.#times = new Float64Array(Math.min(maxSize, 1024));
    this.#slots = new Uint32Array(this.#times.length);
  }

  get size(): number {
    return this.#size;
  }

  /** The earliest time queued; the heap must not be empty. */
  get topTime(): number {
    return this.#times[0] as number;
  }

  /** The slot queued at the earliest time; the heap must not be empty. */
  get topSlot(): number {
    return this.#slots[0] as number;
  }

  /** The place of the top slot. */
  get top(): number {
    return this.#sign;
  }

  /** Whether `place` is one of this heap's. */
  holds(place: number): boolean {
    return place * this.#sign > 0;
  }

  /** The time the slot at `place` is queued under. */
  timeAt(place: number): number {
    return this.#times[this.#indexOf(place)] as number;
  }

  push(slot: number, time: number): void {
    if (this.#size === this.#times.length) this.#grow();
    this.#up(this.#size++, slot, time);
  }

  /** Queues the slot at `place` under another time, earlier or later. */
  move(place: number, time: number): void {
    const index = this.#indexOf(place);
    const slot = this.#slots[index] as number;
    if (time <= (this.#times[index] as number)) this.#up(index, slot, time);
    else this.#down(index, slot, time);
  }

  remove(place: number): void {
    const index = this.#indexOf(place);
    this.#places.setPlace(this.#slots[index] as number, 0);
    const last = --this.#size;
    if (index === last) return;
    // The last entry fills the hole, and goes up or down from there.
    const time = this.#times[last] as number;
    const slot = this.#slots[last] as number;
    const parent = (index - 1) >> 1;
    if (index > 0 && (this.#times[parent] as number) >= time) this.#up(index, slot, time);
    else this.#down(index, slot, time);
  }

  #indexOf(place: number): number {
    return place * this.#sign - 1;
  }

  /** Puts `slot` at `index` or above, over every entry of a later or equal time. */
  #up(index: number, slot: number, time: number): void {
    const times = this.#times;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const parentTime = times[parent] as number;
      if (parentTime < time) break;
      this.#set(index, this.#slots[parent] as number, parentTime);
      index = parent;
    }
    this.#set(index, slot, time);
  }

  /** Puts `slot` at `index` or below, under every entry of an earlier time. */
  #down(index: number, slot: number, time: number): void {
    const times = this.#times;
    const size = this.#size;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= size) break;
      if (child + 1 < size && (times[child + 1] as number) < (times[child] as number)) child++;
      const childTime = times[child] as number;
      if (childTime >= time) break;
      this.#set(index, this.#slots[child] as number, childTime);
      index = child;
    }
    this.#set(index, slot, time);
  }

  #set(index: number, slot: number, time: number): void {
    this.#times[index] = time;
    this.#slots[index] = slot;
    this.#places.setPlace(slot, this.#sign * (index + 1));
  }

  #grow(): void {
    const times = new Float64Array(Math.min(2 * this.#times.length, this.#maxSize));
    times.set(this.#times);
    this.#times = times;
    const slots = new Uint32Array(times.length);
    slots.set(this.#slots);
    this.#slots = slots;
  }
}
