// A process serving through serve() whose close and log misbehave as CLOSE and LOG say, for graceful-shutdown.test.ts.
import { serve } from '../../demo/serve.js';

const { CLOSE = 'ok', LOG = 'ok' } = process.env;

await serve((_req, res) => res.end('ok'), {
  port: 0,
  drainMs: 1_000,
  closeMs: 500,
  // A close that never settles, as RedisStore's did against a Redis that took the connection and never answered.
  ...(CLOSE === 'hang' ? { onClose: () => new Promise<void>(() => {}) } : {}),
  log: (message) => {
    if (LOG === 'throw') throw new Error('the log is broken');
    // A log call that never returns, as pino's exit flush did on a closed stdout.
    if (LOG === 'hang' && message.startsWith('drained'))
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    process.stderr.write(`${message}\n`);
  },
});
process.stderr.write('serving\n');
