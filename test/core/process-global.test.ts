// A value one per process, found by every copy of the library (its ES module and CommonJS builds) on globalThis.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { processGlobal } from '../../src/core/process-global.js';

it('keeps a process-wide value under a Symbol.for key, made once, for every copy of the library to find', () => {
  let made = 0;
  const make = () => ({ made: ++made });
  const first = processGlobal('module-location-test', make);
  assert.equal(processGlobal('module-location-test', make), first);
  assert.equal(made, 1);
  const key = Symbol.for('tollgate.module-location-test.v1');
  assert.equal((globalThis as unknown as Record<symbol, unknown>)[key], first);
});
