// Naive reference models of the five policies, the oracles of the property tests. Each is written from the
// documented behaviour, not from the implementation: explicit window lists, counts per calendar window, arrays of timestamps, event lists on a
// grid, a token level refilled by elapsed time. Retry hints of the window models are found by trying every later
// millisecond.
import type { PolicyResult } from '../../src/stores/index.js';

export interface Model {
  /** The expected result of a request of `cost` at `t`; admits it (records it) when `commit` and allowed. */
  decide(t: number, cost: number, commit: boolean): PolicyResult;
}

function expected(allowed: boolean, remaining: number, resetMs: number, retryAfterMs: number): PolicyResult {
  return { allowed, remaining, resetMs, retryAfterMs };
}

/** The smallest d >= 1 such that `allows(t + d)`, trying each millisecond up to `bound`. */
function firstAllowed(t: number, bound: number, allows: (at: number) => boolean): number {
  for (let d = 1; d <= bound; d++) if (allows(t + d)) return d;
  throw new Error(`reference: nothing allowed within ${bound} ms of ${t}`);
}

/** Fixed window: an explicit list of windows, each opened by the first admitted request after the last closed. */
export class FixedWindowModel implements Model {
  readonly windows: { start: number; used: number }[] = [];
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  #open(t: number): { start: number; used: number } | undefined {
    const last = this.windows.at(-1);
    return last !== undefined && t >= last.start && t < last.start + this.windowMs ? last : undefined;
  }

  #allows(t: number, cost: number): boolean {
    return (this.#open(t)?.used ?? 0) + cost <= this.limit;
  }

  decide(t: number, cost: number, commit: boolean): PolicyResult {
    const open = this.#open(t);
    const used = open?.used ?? 0;
    const end = (open?.start ?? t) + this.windowMs;
    if (used + cost <= this.limit) {
      if (commit) {
        if (open === undefined) this.windows.push({ start: t, used: cost });
        else open.used += cost;
      }
      return expected(true, this.limit - used - cost, end - t, 0);
    }
    const retry = cost > this.limit ? -1 : firstAllowed(t, 2 * this.windowMs, (at) => this.#allows(at, cost));
    return expected(false, this.limit - used, end - t, retry);
  }
}

/** Aligned window: a count per window of the calendar, the window of `t` starting at the last multiple of W. */
export class AlignedWindowModel implements Model {
  readonly used = new Map<number, number>();
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  #start(t: number): number {
    return t - (t % this.windowMs);
  }

  #allows(t: number, cost: number): boolean {
    return (this.used.get(this.#start(t)) ?? 0) + cost <= this.limit;
  }

  decide(t: number, cost: number, commit: boolean): PolicyResult {
    const start = this.#start(t);
    const used = this.used.get(start) ?? 0;
    const end = start + this.windowMs;
    if (used + cost <= this.limit) {
      if (commit) this.used.set(start, used + cost);
      return expected(true, this.limit - used - cost, used + cost > 0 ? end - t : 0, 0);
    }
    const retry = cost > this.limit ? -1 : firstAllowed(t, 2 * this.windowMs, (at) => this.#allows(at, cost));
    return expected(false, this.limit - used, used > 0 ? end - t : 0, retry);
  }
}

/** Sliding log: one timestamp per admitted unit; a window (t - W, t] counts the timestamps inside it. */
export class SlidingLogModel implements Model {
  readonly stamps: number[] = [];
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  #live(t: number): number[] {
    return this.stamps.filter((s) => s > t - this.windowMs && s <= t);
  }

  decide(t: number, cost: number, commit: boolean): PolicyResult {
    const live = this.#live(t);
    if (live.length + cost <= this.limit) {
      if (commit) for (let i = 0; i < cost; i++) this.stamps.push(t);
      return expected(true, this.limit - live.length - cost, this.windowMs, 0);
    }
    const newest = Math.max(...live);
    const retry =
      cost > this.limit
        ? -1
        : firstAllowed(t, this.windowMs, (at) => this.#live(at).length + cost <= this.limit);
    return expected(false, this.limit - live.length, newest + this.windowMs - t, retry);
  }
}

/**
 * Sliding window counter: a list of admitted events on a grid of windows anchored at the first event; a request
 * sees the sums of the current and the previous grid window; two idle windows re-anchor the grid.
 */
export class CounterModel implements Model {
  events: { t: number; cost: number }[] = [];
  anchor = 0;
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  #index(t: number): number {
    return Math.floor((t - this.anchor) / this.windowMs);
  }

  /** The grid window of `t` and the sums it weighs, or undefined when no event weighs anything (a fresh start). */
  #view(t: number): { index: number; previous: number; current: number } | undefined {
    const last = this.events.at(-1);
    if (last === undefined) return undefined;
    const index = this.#index(t);
    if (index >= this.#index(last.t) + 2) return undefined;
    let previous = 0;
    let current = 0;
    for (const e of this.events) {
      if (this.#index(e.t) === index - 1) previous += e.cost;
      if (this.#index(e.t) === index) current += e.cost;
    }
    return { index, previous, current };
  }

  /** Whether `units` more than the current window's count fit at `t`: previous x overlap / W + current <= limit. */
  #fits(t: number, units: number): boolean {
    const view = this.#view(t);
    if (view === undefined) return units <= this.limit;
    const windowEnd = this.anchor + (view.index + 1) * this.windowMs;
    const overlap = windowEnd - t;
    return view.previous * overlap + (view.current + units) * this.windowMs <= this.limit * this.windowMs;
  }

  /** The most whole units that would still fit after `spent`. */
  #remaining(t: number, spent: number): number {
    let r = 0;
    while (this.#fits(t, spent + r + 1)) r++;
    return r;
  }

  decide(t: number, cost: number, commit: boolean): PolicyResult {
    const view = this.#view(t);
    if (this.#fits(t, cost)) {
      const remaining = this.#remaining(t, cost);
      const anchor = view === undefined ? t : this.anchor;
      const index = view === undefined ? 0 : view.index;
      if (commit) {
        if (view === undefined) {
          this.anchor = t;
          this.events = [];
        }
        this.events.push({ t, cost });
      }
      // The event just added weighs until the end of the window after its own.
      return expected(true, remaining, anchor + (index + 2) * this.windowMs - t, 0);
    }
    const last = this.events.at(-1);
    const resetMs =
      view === undefined || last === undefined
        ? 0
        : this.anchor + (this.#index(last.t) + 2) * this.windowMs - t;
    const retry = cost > this.limit ? -1 : firstAllowed(t, 3 * this.windowMs, (at) => this.#fits(at, cost));
    return expected(false, view === undefined ? this.limit : this.#remaining(t, 0), resetMs, retry);
  }
}

/**
 * Token bucket: a token level scaled to integers (one token = `interval` units, one unit per microsecond) and the
 * time of the last refill; the level grows by the elapsed time, capped at capacity. BigInt throughout.
 */
export class BucketModel implements Model {
  readonly full: bigint;
  level: bigint;
  last: bigint | undefined;
  constructor(
    readonly capacity: number,
    readonly interval: bigint,
  ) {
    this.full = BigInt(capacity) * interval;
    this.level = this.full;
  }

  decide(t: number, cost: number, commit: boolean): PolicyResult {
    const now = BigInt(t) * 1000n;
    let level = this.level;
    if (this.last !== undefined && now > this.last) level += now - this.last;
    if (level > this.full) level = this.full;
    const need = BigInt(cost) * this.interval;
    const ceilMs = (us: bigint) => Number((us + 999n) / 1000n);
    if (level >= need) {
      level -= need;
      if (commit) {
        this.level = level;
        this.last = now;
      }
      return expected(true, Number(level / this.interval), ceilMs(this.full - level), 0);
    }
    const retry = cost > this.capacity ? -1 : ceilMs(need - level);
    return expected(false, Number(level / this.interval), ceilMs(this.full - level), retry);
  }
}

/** A bucket that never refills: a count of tokens left. */
export class FrozenBucketModel implements Model {
  left: number;
  constructor(readonly capacity: number) {
    this.left = capacity;
  }

  decide(_t: number, cost: number, commit: boolean): PolicyResult {
    if (cost <= this.left) {
      if (commit) this.left -= cost;
      return expected(true, this.left - (commit ? 0 : cost), -1, 0);
    }
    return expected(false, this.left, -1, -1);
  }
}
