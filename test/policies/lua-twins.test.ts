// Every built-in policy kind has its Lua twin, one Lua table with the steps the engine calls.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { builtInTwins } from '../../src/policies/index.js';

it('each policy kind has a Lua twin with load, save, decide and refund', () => {
  const kinds = [
    'token-bucket',
    'fixed-window',
    'aligned-window',
    'sliding-window',
    'sliding-window-counter',
    'concurrency',
    'lockout',
  ];
  assert.deepEqual(Object.keys(builtInTwins).sort(), [...kinds].sort());
  for (const kind of kinds) {
    const lua = builtInTwins[kind] as string;
    assert.ok(lua.trimStart().startsWith('{') && lua.trimEnd().endsWith('}'), `${kind}: one Lua table`);
    // `load` and `save` may name a shared helper (an integer state's read_integer and set_state).
    for (const step of ['load = ', 'save = ', 'decide = function(', 'refund = function('])
      assert.ok(lua.includes(`\n  ${step}`), `${kind}: ${step}`);
  }
});
