// The eviction queue against a model: after any writes (times moving later, earlier, into and out of holds), removals
// and time passing, it picks a bucket at rest, else the live one nearest to rest, else the held one nearest to the end
// of its hold, never a kept one, and leaves every other slot queued.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { EvictionQueue, type QueuedSlots } from '../../../src/stores/memory/eviction-queue.js';

interface Row {
  place: number;
  expiresAt: number;
  heldUntil: number;
  inUse: boolean;
}

/** Rows by slot, as the bucket pools keep them, with the hold end a policy would read from each state. */
class Rows implements QueuedSlots {
  readonly rows = new Map<number, Row>();
  #row(slot: number): Row {
    let row = this.rows.get(slot);
    if (row === undefined) {
      row = { place: 0, expiresAt: 0, heldUntil: 0, inUse: false };
      this.rows.set(slot, row);
    }
    return row;
  }
  placeOf(slot: number): number {
    return this.#row(slot).place;
  }
  setPlace(slot: number, place: number): void {
    this.#row(slot).place = place;
  }
  expiresAt(slot: number): number {
    return this.#row(slot).expiresAt;
  }
  inUse(slot: number): boolean {
    return this.#row(slot).inUse;
  }
}

type Step =
  | { readonly op: 'write'; readonly slot: number; readonly expiresAt: number; readonly holdMs: number }
  | { readonly op: 'remove'; readonly slot: number }
  | { readonly op: 'evict'; readonly keep: readonly number[] }
  | { readonly op: 'wait'; readonly ms: number };

const slot = fc.integer({ min: 0, max: 40 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    op: fc.constant('write' as const),
    slot,
    expiresAt: fc.integer({ min: 0, max: 60 }),
    holdMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 })),
  }),
  fc.record({ op: fc.constant('remove' as const), slot }),
  fc.record({ op: fc.constant('evict' as const), keep: fc.array(slot, { maxLength: 3 }) }),
  fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 10 }) }),
);

/** What the model would accept as the eviction: the rank of every slot, lowest first; -1 when all are kept. */
function bestRank(rows: Rows, live: ReadonlySet<number>, keep: readonly number[], nowMs: number): number[] {
  const candidates = [...live].filter((s) => !keep.includes(s));
  const rank = (s: number) => {
    const { expiresAt, heldUntil } = rows.rows.get(s) as Row;
    // Held ones after every other, each class by its own time.
    return heldUntil > nowMs ? [1, heldUntil] : [0, expiresAt];
  };
  const ranks = candidates
    .map(rank)
    .sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  return ranks[0] ?? [-1];
}

describe('EvictionQueue', () => {
  it('always evicts what the model ranks first, and loses no slot', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 50, maxLength: 300 }), (steps) => {
        const rows = new Rows();
        const queue = new EvictionQueue(rows, (slot) => (rows.rows.get(slot) as Row).heldUntil, 41);
        const live = new Set<number>();
        let nowMs = 0;
        for (const s of steps) {
          if (s.op === 'wait') nowMs += s.ms;
          else if (s.op === 'write') {
            const row = rows.rows.get(s.slot) ?? { place: 0, expiresAt: 0, heldUntil: 0, inUse: false };
            rows.rows.set(s.slot, row);
            row.inUse = true;
            const lastExpiresAt = row.expiresAt;
            row.expiresAt = nowMs + s.expiresAt;
            // As the store has it: a hold never outlives the state.
            row.heldUntil = Math.min(nowMs + s.holdMs, row.expiresAt);
            if (!live.has(s.slot)) queue.add(s.slot, row.heldUntil, nowMs);
            else queue.written(s.slot, row.expiresAt < lastExpiresAt, row.expiresAt, row.heldUntil, nowMs);
            live.add(s.slot);
          } else if (s.op === 'remove') {
            if (!live.has(s.slot)) continue;
            queue.remove(s.slot);
            live.delete(s.slot);
            (rows.rows.get(s.slot) as Row).inUse = false;
          } else {
            const expected = bestRank(rows, live, s.keep, nowMs);
            const evicted = queue.next(nowMs, s.keep);
            if (expected[0] === -1) {
              assert.equal(evicted, -1);
              continue;
            }
            assert.ok(live.has(evicted) && !s.keep.includes(evicted), `evicted ${evicted}`);
            assert.deepEqual(bestRank(rows, new Set([evicted]), [], nowMs), expected);
            const { expiresAt, heldUntil } = rows.rows.get(evicted) as Row;
            const state = expiresAt <= nowMs ? 'at-rest' : heldUntil > nowMs ? 'held' : 'live';
            assert.equal(queue.stateOf(evicted, nowMs), state);
            queue.remove(evicted);
            live.delete(evicted);
            (rows.rows.get(evicted) as Row).inUse = false;
          }
          // Every slot out of use is out of the heaps; one in use is in them, unless it arrived since the last look.
          for (const [s, row] of rows.rows) if (!live.has(s)) assert.equal(row.place, 0, `slot ${s} let go`);
        }
        // Emptied one by one, in order, it hands back every slot once.
        const drained = new Set<number>();
        for (let s = queue.next(nowMs, []); s >= 0; s = queue.next(nowMs, [])) {
          assert.ok(!drained.has(s));
          drained.add(s);
          queue.remove(s);
          (rows.rows.get(s) as Row).inUse = false;
        }
        assert.deepEqual([...drained].sort(), [...live].sort());
      }),
      { numRuns: 500 },
    );
  });
});
