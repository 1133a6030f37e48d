// A live MemoryStore never holds its process open: its sweep timer is unref()d, and close() clears it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { it } from 'node:test';

it('the process exits with a live store (its timer is unref()d) and after close()', () => {
  const index = new URL('../../../src/index.ts', import.meta.url).href;
  for (const close of [false, true]) {
    const code = `
      const { MemoryStore, createLimiter, fixedWindow } = await import(${JSON.stringify(index)});
      const store = new MemoryStore({ cleanupIntervalMs: 5 });
      const limiter = createLimiter({ policy: fixedWindow({ limit: 1, windowMs: 1000 }), store });
      await limiter.consume('a');
      ${close ? 'store.close();' : ''}
      console.log('done');
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    assert.equal(child.error, undefined);
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout.trim(), 'done');
  }
});
