// Which bucket a full MemoryStore gives up: one at rest, else the live one nearest to rest, and one holding a promise
// (a lease, a block, a booked wait) last, the nearest to the end of its hold first.

import type { EvictionState } from '../store.js';
import { SlotHeap, type SlotPlaces } from './slot-heap.js';

/** What the queue reads of a slot, kept beside its state: its place, its rest time, and whether it is in use. */
export interface QueuedSlots extends SlotPlaces {
  /** When the bucket is at rest (equivalent to no state at all). */
  expiresAt(slot: number): number;
  /** Whether the slot holds a bucket (it was allocated and not released since). */
  inUse(slot: number): boolean;
}

/** When a slot's bucket stops holding a promise, as of `nowMs`; `nowMs` or earlier when it holds none. */
export type HoldEnd = (slot: number, nowMs: number) => number;

/** New buckets wait at most this many before they are sorted into the heaps. */
const ARRIVALS = 1024;

/**
 * Two heaps of slots: those holding nothing by rest time, those holding a promise by the end of their hold. Each
 * slot's queued time is a lower bound of its real one, put right only when it reaches the top: the common write, a
 * busy bucket whose rest moves later, costs a comparison and no heap work. Only a time that moves earlier (a release,
 * a refund, a clock gone back), a hold begun or ended, or a held bucket written again touches a heap, in O(log n).
 * Rows keep no time for a hold: its end is asked of `holdEnd` (the bucket's policy, from its state) when evicting.
 */
export class EvictionQueue {
  readonly #slots: QueuedSlots;
  readonly #holdEnd: HoldEnd;
  readonly #resting: SlotHeap;
  readonly #holding: SlotHeap;
  /**
   * New buckets holding nothing, sorted into the resting heap in a batch when the queue is next asked, or every
   * `ARRIVALS`: until then their place is 0. An insert so costs one number written, and no heap code sits on the path
   * of a decision (inlined there with the insert, it slowed every in-memory decision, with no eviction at all).
   */
  readonly #arrivals = new Float64Array(ARRIVALS);
  #arrived = 0;

  /** `maxSlots`: the store's bound on buckets. */
  constructor(slots: QueuedSlots, holdEnd: HoldEnd, maxSlots: number) {
    this.#slots = slots;
    this.#holdEnd = holdEnd;
    this.#resting = new SlotHeap(slots, 1, maxSlots);
    this.#holding = new SlotHeap(slots, -1, maxSlots);
  }

  /** A new bucket, just written (its place is 0), holding a promise until `heldUntil` if after `nowMs`. */
  add(slot: number, heldUntil: number, nowMs: number): void {
    // Only a lease, a block or a booking (never a plain consume) makes a new bucket hold: it is queued at once.
    if (heldUntil > nowMs) this.#holding.push(slot, heldUntil);
    else {
      this.#arrivals[this.#arrived++] = slot;
      if (this.#arrived === ARRIVALS) this.#settle();
    }
  }

  /**
   * After a write of a bucket in use (`earlier`: its rest moved earlier). Most move nothing: an arrival (place 0) is
   * sorted in by its rest time then, unless it now holds; one that holds nothing, was queued as holding nothing (a
   * held one is in the holding heap, at a place below 0) and whose rest did not move earlier keeps a lower bound.
   */
  written(slot: number, earlier: boolean, expiresAt: number, heldUntil: number, nowMs: number): void {
    const place = this.#slots.placeOf(slot);
    // Small, so that it is inlined into every write; the rest is `#moved`.
    if (place < 0 || ((earlier || heldUntil > nowMs) && (place > 0 || heldUntil > nowMs)))
      this.#moved(slot, place, expiresAt, heldUntil, nowMs);
  }

  #moved(slot: number, place: number, expiresAt: number, heldUntil: number, nowMs: number): void {
    const holds = heldUntil > nowMs;
    const heap = holds ? this.#holding : this.#resting;
    const time = holds ? heldUntil : expiresAt;
    if (heap.holds(place)) {
      if (time < heap.timeAt(place)) heap.move(place, time);
      return;
    }
    // An arrival that now holds leaves the arrivals by being placed: they pass over it.
    if (place !== 0) this.#heapOf(place).remove(place);
    heap.push(slot, time);
  }

  /** Before the slot is released: an arrival is passed over when the arrivals are sorted in, being out of use. */
  remove(slot: number): void {
    const place = this.#slots.placeOf(slot);
    if (place !== 0) this.#heapOf(place).remove(place);
  }

  /**
   * The slot to give up for room: at rest (it loses nothing), else the live one nearest to rest (it hands back the
   * least), else the held one nearest to the end of its hold. Never one of `keep`, the request's own buckets; -1
   * when they are all there is.
   */
  next(nowMs: number, keep: readonly (number | undefined)[]): number {
    this.#settle();
    this.#endHolds(nowMs);
    const slot = this.#earliest(this.#resting, nowMs, keep);
    return slot >= 0 ? slot : this.#earliest(this.#holding, nowMs, keep);
  }

  /** What evicting `slot` now drops. */
  stateOf(slot: number, nowMs: number): EvictionState {
    if (this.#slots.expiresAt(slot) <= nowMs) return 'at-rest';
    return this.#holdEnd(slot, nowMs) > nowMs ? 'held' : 'live';
  }

  /**
   * Sorts the arrivals, which hold nothing, into the resting heap. One released since is out of use, and passed over;
   * one placed since (it started to hold, or was released and handed out again) passes too.
   */
  #settle(): void {
    for (let i = 0; i < this.#arrived; i++) {
      const slot = this.#arrivals[i] as number;
      if (this.#slots.placeOf(slot) === 0 && this.#slots.inUse(slot))
        this.#resting.push(slot, this.#slots.expiresAt(slot));
    }
    this.#arrived = 0;
  }

  /** Holds that ended with no write since go with the buckets holding nothing. */
  #endHolds(nowMs: number): void {
    const holding = this.#holding;
    while (holding.size > 0 && holding.topTime <= nowMs) {
      const slot = holding.topSlot;
      const heldUntil = this.#holdEnd(slot, nowMs);
      if (heldUntil > nowMs) holding.move(holding.top, heldUntil);
      else {
        holding.remove(holding.top);
        this.#resting.push(slot, this.#slots.expiresAt(slot));
      }
    }
  }

  /** The heap's earliest slot by its real time, none of `keep` (set aside and queued again); -1 for none. */
  #earliest(heap: SlotHeap, nowMs: number, keep: readonly (number | undefined)[]): number {
    let kept: number[] | undefined;
    let found = -1;
    while (heap.size > 0) {
      const slot = heap.topSlot;
      const time = heap === this.#holding ? this.#holdEnd(slot, nowMs) : this.#slots.expiresAt(slot);
      if (time > heap.topTime) heap.move(heap.top, time);
      else if (keep.includes(slot)) {
        kept ??= [];
        kept.push(slot, time);
        heap.remove(heap.top);
      } else {
        found = slot;
        break;
      }
    }
    for (let i = 0; kept !== undefined && i < kept.length; i += 2)
      heap.push(kept[i] as number, kept[i + 1] as number);
    return found;
  }

  #heapOf(place: number): SlotHeap {
    return this.#resting.holds(place) ? this.#resting : this.#holding;
  }
}
