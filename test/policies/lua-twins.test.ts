// Every policy kind has its Lua twin in the script, registered under its own kind with the steps it needs.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { policyLua } from '../../src/policies/index.js';

it('each policy kind has a Lua twin with load, save, decide and refund', () => {
  const kinds = [
    'token-bucket',
    'fixed-window',
    'sliding-window',
    'sliding-window-counter',
    'concurrency',
    'lockout',
  ];
  assert.deepEqual(Object.keys(policyLua).sort(), [...kinds].sort());
  for (const kind of kinds) {
    const lua = policyLua[kind as keyof typeof policyLua];
    assert.ok(lua.includes(`policies['${kind}'] = {`), kind);
    // `load` and `save` may name a shared helper (an integer state's read_integer and set_state).
    for (const step of ['load = ', 'save = ', 'decide = function(', 'refund = function('])
      assert.ok(lua.includes(`\n  ${step}`), `${kind}: ${step}`);
  }
});
