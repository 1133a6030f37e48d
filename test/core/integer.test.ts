// Exact integer division against BigInt arithmetic, across the whole safe range and at its edges.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ceilDiv, floorDiv } from '../../src/core/integer.js';

const floorBig = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));
const ceilBig = (a: bigint, b: bigint): bigint => (a >= 0n ? (a + b - 1n) / b : -(-a / b));

function agrees(a: number, b: number): void {
  assert.equal(BigInt(floorDiv(a, b)), floorBig(BigInt(a), BigInt(b)), `floorDiv(${a}, ${b})`);
  assert.equal(BigInt(ceilDiv(a, b)), ceilBig(BigInt(a), BigInt(b)), `ceilDiv(${a}, ${b})`);
}

describe('floorDiv and ceilDiv', () => {
  it('round down and up, on both sides of 0', () => {
    assert.deepEqual([floorDiv(7, 2), ceilDiv(7, 2)], [3, 4]);
    assert.deepEqual([floorDiv(-7, 2), ceilDiv(-7, 2)], [-4, -3]);
    assert.deepEqual([floorDiv(6, 3), ceilDiv(6, 3)], [2, 2]);
    assert.deepEqual([floorDiv(-6, 3), ceilDiv(-6, 3)], [-2, -2]);
    assert.deepEqual([floorDiv(0, 5), ceilDiv(0, 5)], [0, 0]);
    assert.deepEqual([floorDiv(1, 1000), ceilDiv(1, 1000)], [0, 1]);
    // +0, not -0: the memory engine's figures must equal the integers Redis replies with.
    assert.deepEqual([floorDiv(-1, 1000), ceilDiv(-1, 1000)], [-1, 0]);
  });

  it('are exact one step either side of a multiple, up to the largest safe integer', () => {
    for (const b of [1, 2, 3, 7, 1000, 999_983, 1_000_000, 2 ** 20 + 1, 2 ** 31 - 1]) {
      for (const top of [Number.MAX_SAFE_INTEGER, 2 ** 52, 2 ** 51, 1_800_000_000_000_000]) {
        const k = Math.floor(top / b);
        for (const a of [k * b - 1, k * b, k * b + 1]) {
          if (Number.isSafeInteger(a)) agrees(a, b);
          if (Number.isSafeInteger(-a)) agrees(-a, b);
        }
      }
    }
  });

  it('are exact for any safe integer over any divisor', () => {
    const divisor = fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 2 ** 40 }));
    fc.assert(
      fc.property(fc.maxSafeInteger(), divisor, (a, b) => agrees(a, b)),
      { numRuns: 2000 },
    );
  });
});
