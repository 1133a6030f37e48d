// The demos' stdout: a reader that stalls leaves a bounded queue behind, never the whole log in memory.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const LOGGER = fileURLToPath(new URL('../../demo/demo-logger.ts', import.meta.url));

it('drops lines once a stalled reader has left 4 MB queued on stdout', { timeout: 20_000 }, async () => {
  // 40 MB of log lines into a pipe nobody reads, then the queue's size on stderr.
  const script = `
    const { writeStdoutLine } = await import(${JSON.stringify(LOGGER)});
    const line = 'x'.repeat(1023) + '\\n';
    for (let i = 0; i < 40_000; i++) writeStdoutLine(line);
    process.stderr.write(String(process.stdout.writableLength));
    process.exit(0);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Never read: the pipe fills (64 KB) and the rest queues in the child.
  child.stdout.pause();
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  child.stdout.destroy();
  assert.equal(code, 0, stderr);
  const queued = Number(stderr);
  assert.ok(queued > 0 && queued <= 4 * 1024 * 1024 + 1024, `${queued} bytes queued`);
});
