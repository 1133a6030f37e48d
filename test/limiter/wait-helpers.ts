// What the wait tests (and the waiting bench) share: letting promises settle on mocked timers, moving mocked time, a store that counts calls.
import { mock } from 'node:test';
import { MemoryStore, type Store } from '../../src/index.js';

/** Lets promises settle (setImmediate is not mocked): a few turns, for chains of awaits. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 6; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Settles what is due now, then moves the mocked time forward in steps, settling promises after each. */
export async function advance(ms: number, step = 10): Promise<void> {
  await settle();
  for (let moved = 0; moved < ms; moved += step) {
    mock.timers.tick(Math.min(step, ms - moved));
    await settle();
  }
}

/** A store that counts its evaluations, around `inner` (by default a MemoryStore on the mocked clock). */
export function countingStore(inner: Store = new MemoryStore({ autoCleanup: false })): {
  store: Store;
  calls: () => number;
} {
  let calls = 0;
  return {
    calls: () => calls,
    store: {
      ...(inner.synchronous === true ? { synchronous: true } : {}),
      evaluate: (request) => {
        calls++;
        return inner.evaluate(request);
      },
      reset: (keys) => inner.reset(keys),
    },
  };
}
