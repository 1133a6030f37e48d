// SlotHeap against a model: through any pushes, moves and removals it keeps every slot's place and time, and gives
// its slots back earliest first; a slot pushed at the top's time goes on top.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SlotHeap } from '../../../src/stores/memory/slot-heap.js';

type Op =
  | { readonly op: 'push'; readonly slot: number; readonly time: number }
  | { readonly op: 'move' | 'remove'; readonly pick: number; readonly time: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant('push' as const),
    slot: fc.integer({ min: 0, max: 199 }),
    time: fc.integer({ min: 0, max: 100 }),
  }),
  fc.record({
    op: fc.constantFrom('move' as const, 'remove' as const),
    pick: fc.nat(),
    time: fc.integer({ min: 0, max: 100 }),
  }),
);

/** A heap of the given sign over places kept in a map, and the model: slot -> time. */
function setup(sign: 1 | -1) {
  const places = new Map<number, number>();
  const heap = new SlotHeap(
    { placeOf: (slot) => places.get(slot) ?? 0, setPlace: (slot, place) => places.set(slot, place) },
    sign,
    200,
  );
  return { heap, places, model: new Map<number, number>() };
}

describe('SlotHeap', () => {
  it('keeps places and times through pushes, moves and removals, and gives slots back earliest first', () => {
    fc.assert(
      fc.property(fc.constantFrom(1 as const, -1 as const), fc.array(op, { maxLength: 400 }), (sign, ops) => {
        const { heap, places, model } = setup(sign);
        for (const o of ops) {
          const queued = [...model.keys()];
          if (o.op === 'push') {
            if (model.has(o.slot)) continue;
            heap.push(o.slot, o.time);
            model.set(o.slot, o.time);
          } else if (queued.length > 0) {
            const slot = queued[o.pick % queued.length] as number;
            if (o.op === 'move') {
              heap.move(places.get(slot) as number, o.time);
              model.set(slot, o.time);
            } else {
              heap.remove(places.get(slot) as number);
              model.delete(slot);
              assert.equal(places.get(slot), 0, 'a removed slot has no place');
            }
          }
          assert.equal(heap.size, model.size);
          for (const [slot, time] of model) {
            const place = places.get(slot) as number;
            assert.ok(heap.holds(place), `slot ${slot} is placed in this heap`);
            assert.equal(heap.timeAt(place), time);
          }
        }
        let last = Number.NEGATIVE_INFINITY;
        while (heap.size > 0) {
          const [slot, time] = [heap.topSlot, heap.topTime];
          assert.equal(time, Math.min(...model.values()));
          assert.ok(time >= last);
          last = time;
          heap.remove(heap.top);
          model.delete(slot);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("puts a slot pushed at the top's time on top, above the slots queued before it", () => {
    const { heap } = setup(1);
    for (const slot of [4, 8, 15]) {
      heap.push(slot, 7);
      assert.equal(heap.topSlot, slot);
    }
    heap.push(16, 9);
    heap.remove(heap.top);
    heap.push(23, 7);
    assert.equal(heap.topSlot, 23);
    heap.push(42, 6);
    assert.equal(heap.topSlot, 42);
  });

  it('grows past its first 1024 entries up to its bound', () => {
    const places = new Map<number, number>();
    const heap = new SlotHeap(
      { placeOf: (slot) => places.get(slot) ?? 0, setPlace: (slot, place) => places.set(slot, place) },
      -1,
      3000,
    );
    for (let slot = 0; slot < 3000; slot++) heap.push(slot, 3000 - slot);
    assert.deepEqual([heap.size, heap.topSlot, heap.topTime, places.get(2999)], [3000, 2999, 1, -1]);
  });
});
