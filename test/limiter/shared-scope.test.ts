// Two limiters with equal policies and no scope share buckets: said once, at wire-up, naming where each was made.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createLimiter, fixedWindow, MemoryStore } from '../../src/index.js';
import { sharedScopeWarningsDuring } from '../harness/policy-helpers.js';

it('warns once when two limiters on one store share a default scope, naming both creation sites', async () => {
  const store = new MemoryStore({ autoCleanup: false });
  const policy = () => fixedWindow({ limit: 5, windowMs: '1m' });
  const warnings = await sharedScopeWarningsDuring(() => {
    const first = createLimiter({ policy: policy(), store });
    const second = createLimiter({ policy: policy(), store });
    createLimiter({ policy: policy(), store });
    assert.equal(first.scope, second.scope);
  });
  assert.equal(warnings.length, 1);
  const [warning] = warnings as [Error];
  assert.equal(warning.name, 'TollgateWarning');
  assert.match(warning.message, /same policies \(fixed-window 5\) and no `scope`/);
  // Both lines of this file: where the first and the second limiter were created.
  assert.equal(warning.message.match(/shared-scope\.test\.ts:\d+:\d+/g)?.length, 2);
});

it('names one place for limiters made by a loop, and ignores a limiter that failed its own checks', async () => {
  const store = new MemoryStore({ autoCleanup: false });
  const warnings = await sharedScopeWarningsDuring(() => {
    // Refused for its cost after its scope was worked out: it was never created, so it takes no scope.
    assert.throws(() => createLimiter({ policy: fixedWindow({ limit: 3, windowMs: '1m' }), store, cost: 4 }));
    for (let i = 0; i < 2; i++) createLimiter({ policy: fixedWindow({ limit: 3, windowMs: '1m' }), store });
  });
  assert.equal(warnings.length, 1);
  assert.match(
    (warnings[0] as Error).message,
    /both created at .*shared-scope\.test\.ts:\d+:\d+\)? \(a loop or a factory/,
  );
});

it('says nothing for explicit scopes, other stores, or other policies', async () => {
  const store = new MemoryStore({ autoCleanup: false });
  const warnings = await sharedScopeWarningsDuring(() => {
    createLimiter({ policy: fixedWindow({ limit: 7, windowMs: '1m' }), store, scope: 'a' });
    createLimiter({ policy: fixedWindow({ limit: 7, windowMs: '1m' }), store, scope: 'a' });
    createLimiter({ policy: fixedWindow({ limit: 7, windowMs: '1m' }), store });
    createLimiter({
      policy: fixedWindow({ limit: 7, windowMs: '1m' }),
      store: new MemoryStore({ autoCleanup: false }),
    });
    createLimiter({ policy: fixedWindow({ limit: 8, windowMs: '1m' }), store });
  });
  assert.deepEqual(warnings, []);
});
