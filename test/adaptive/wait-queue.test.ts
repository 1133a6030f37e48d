// Unit tests of an adaptive limit's line of waiters: its order, its deadlines and aborts, and who leaving serves.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { adaptiveConcurrency } from '../../src/adaptive/adaptive-concurrency.js';
import { WaitQueue } from '../../src/adaptive/wait-queue.js';
import type { LocalAdmission, LocalSlot, LocalWait } from '../../src/policies/local-policy.js';
import { pointed } from '../harness/error-pointer.js';
import { StubAlgorithm } from './stub-algorithm.js';

/** A promise's fate so far, read after the microtasks and immediates queued before it have run. */
function watch<T>(promise: Promise<T>): {
  readonly outcome: () => Promise<'pending' | T | { error: unknown }>;
} {
  let settled: { value: T } | { error: unknown } | undefined;
  promise.then(
    (value) => {
      settled = { value };
    },
    (error: unknown) => {
      settled = { error };
    },
  );
  return {
    outcome: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      if (settled === undefined) return 'pending';
      return 'value' in settled ? settled.value : settled;
    },
  };
}

function limitOf(limit: number, partitions?: Record<string, number>) {
  const algorithm = new StubAlgorithm(limit);
  const policy = adaptiveConcurrency({
    algorithm,
    clock: () => 0,
    ...(partitions === undefined ? {} : { partitions }),
  });
  const hold = (partition?: string) => policy.admit(partition).slot as LocalSlot;
  return { policy, algorithm, hold };
}

/** Beyond what one timer honours: no deadline, so a waiter a test leaves in line keeps no timer running after it. */
const NO_DEADLINE = 2 ** 31;

function waitFor(partition: string | undefined, maxWaitMs = NO_DEADLINE, signal?: AbortSignal): LocalWait {
  return { partition, maxWaitMs, signal };
}

const SLOT: LocalSlot = { release: () => {}, cancel: () => {} };

/** An admission whose remainder tells which partition it was for, by the length of its name. */
function admission(partition: string | undefined): LocalAdmission {
  const remaining = partition?.length ?? 0;
  return { result: { allowed: true, remaining, resetMs: 0, retryAfterMs: 0 }, slot: SLOT };
}

const TIMED_OUT = (ms: number) =>
  pointed(
    `the request cannot pass within \`maxWaitMs\` (${ms} ms): no slot of the adaptive limit freed in time`,
    'ERR_TOLLGATE_WAIT_TIMEOUT',
  );

describe('wait queue: order', () => {
  it('serves waiters first come, first served, one per freed slot', async () => {
    const { policy, hold } = limitOf(1);
    const held = hold();
    const served: string[] = [];
    const slots = new Map<string, LocalSlot>();
    for (const name of ['first', 'second', 'third'])
      void policy.queue(waitFor(undefined)).then(({ slot }) => {
        served.push(name);
        slots.set(name, slot as LocalSlot);
      });
    await watch(Promise.resolve()).outcome();
    assert.deepEqual(served, []);
    held.release();
    await watch(Promise.resolve()).outcome();
    assert.deepEqual(served, ['first']);
    slots.get('first')?.cancel();
    await watch(Promise.resolve()).outcome();
    assert.deepEqual(served, ['first', 'second']);
    slots.get('second')?.release({ status: 200 });
    await watch(Promise.resolve()).outcome();
    assert.deepEqual(served, ['first', 'second', 'third']);
    assert.equal(policy.inFlight, 1);
  });

  it('serves the line on each join, as when the limit has risen meanwhile', async () => {
    const { policy, algorithm, hold } = limitOf(1);
    hold();
    const first = watch(policy.queue(waitFor(undefined)));
    algorithm.limit = 2;
    assert.equal(await first.outcome(), 'pending');
    const second = watch(policy.queue(waitFor(undefined)));
    assert.notEqual(await first.outcome(), 'pending');
    assert.equal(await second.outcome(), 'pending');
    assert.equal(policy.inFlight, 2);
  });

  it('lets a waiter behind go when the one ahead cannot yet, so one partition never holds up another', async () => {
    const { policy, hold } = limitOf(4, { live: 0.5, batch: 0.5 });
    hold('batch');
    hold('batch');
    const live = hold('live');
    hold('live');
    const leaving = new AbortController();
    const batch = watch(policy.queue(waitFor('batch', NO_DEADLINE, leaving.signal)));
    const second = watch(policy.queue(waitFor('live')));
    // The freed slot is live's own guarantee, which batch may not borrow: the live waiter behind takes it.
    live.release();
    assert.equal(await batch.outcome(), 'pending');
    assert.notEqual(await second.outcome(), 'pending');
    assert.equal(policy.inFlight, 4);
    leaving.abort(new Error('client left'));
    assert.deepEqual(await batch.outcome(), { error: new Error('client left') });
    assert.equal(policy.inFlight, 4);
  });

  it('asks for every waiter in turn, granting each that can go in arrival order', async () => {
    const asked: (string | undefined)[] = [];
    const free = new Set<string | undefined>(['b']);
    const line = new WaitQueue((partition) => {
      asked.push(partition);
      return free.has(partition) ? admission(partition) : undefined;
    }, 60_000);
    const a = watch(line.join(waitFor('a')));
    const b = watch(line.join(waitFor('b')));
    // b went past a, still waiting.
    assert.equal(line.length, 1);
    assert.deepEqual(asked, ['a', 'a', 'b']);
    assert.equal(await a.outcome(), 'pending');
    assert.equal(((await b.outcome()) as LocalAdmission).result.remaining, 'b'.length);
    free.add('a');
    const c = watch(line.join(waitFor('c')));
    const d = watch(line.join(waitFor('a')));
    assert.deepEqual(asked, ['a', 'a', 'b', 'a', 'c', 'c', 'a']);
    assert.equal(((await a.outcome()) as LocalAdmission).slot, SLOT);
    assert.equal(await c.outcome(), 'pending');
    assert.equal(((await d.outcome()) as LocalAdmission).slot, SLOT);
    assert.equal(line.length, 1);
  });

  it('serves those left waiting again after retryMs, once, though no slot was released', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let asks = 0;
    let open = false;
    const line = new WaitQueue(() => {
      asks++;
      return open ? admission('x') : undefined;
    }, 250);
    const first = watch(line.join(waitFor('a')));
    const second = watch(line.join(waitFor('b')));
    // Each join served the line; one retry timer stands for both.
    assert.equal(asks, 3);
    t.mock.timers.tick(249);
    assert.equal(asks, 3);
    t.mock.timers.tick(1);
    assert.equal(asks, 5);
    open = true;
    t.mock.timers.tick(250);
    assert.equal(asks, 7);
    assert.notEqual(await first.outcome(), 'pending');
    assert.notEqual(await second.outcome(), 'pending');
    // Nobody left: no retry is scheduled.
    t.mock.timers.tick(1000);
    assert.equal(asks, 7);
  });

  it('starts no retry for an empty line: the first left waiting are served retryMs after they came', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let asks = 0;
    const line = new WaitQueue(() => {
      asks++;
      return undefined;
    }, 250);
    line.serve();
    t.mock.timers.tick(100);
    void line.join(waitFor('a')).catch(() => {});
    assert.equal(asks, 1);
    t.mock.timers.tick(249);
    assert.equal(asks, 1);
    t.mock.timers.tick(1);
    assert.equal(asks, 2);
  });

  it('goes round again when a turn frees room itself, for those it had passed', async () => {
    const asked: (string | undefined)[] = [];
    let open = false;
    const line: WaitQueue = new WaitQueue((partition) => {
      asked.push(partition);
      if (partition === 'a') return open ? admission('a') : undefined;
      // As a slot expiring during this turn would: the line is served again, and room comes for `a`.
      if (!open) {
        open = true;
        line.serve();
      }
      return undefined;
    }, 60_000);
    const first = watch(line.join(waitFor('a')));
    void line.join(waitFor('bb')).catch(() => {});
    assert.deepEqual(asked, ['a', 'a', 'bb', 'a', 'bb']);
    assert.deepEqual(await first.outcome(), admission('a'));
    assert.equal(line.length, 1);
  });
});

describe('wait queue: deadlines and aborts', () => {
  it('rejects a waiter at maxWaitMs, and not a moment before', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { policy, hold } = limitOf(1);
    hold();
    const { signal } = new AbortController();
    const waiting = watch(policy.queue(waitFor(undefined, 500, signal)));
    t.mock.timers.tick(499);
    assert.equal(await waiting.outcome(), 'pending');
    assert.equal(getEventListeners(signal, 'abort').length, 1);
    t.mock.timers.tick(1);
    const outcome = (await waiting.outcome()) as { error: { code: string; message: string } };
    assert.equal(outcome.error.code, 'ERR_TOLLGATE_WAIT_TIMEOUT');
    assert.equal(outcome.error.message, TIMED_OUT(500));
    // Gone from the line, it no longer listens to the signal.
    assert.equal(getEventListeners(signal, 'abort').length, 0);
    assert.equal(policy.inFlight, 1);
  });

  it('waits without a deadline past the longest timer, and with one up to it', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { policy, hold } = limitOf(1);
    const held = hold();
    const longest = watch(policy.queue(waitFor(undefined, 2 ** 31 - 1)));
    const beyond = watch(policy.queue(waitFor(undefined, NO_DEADLINE)));
    t.mock.timers.tick(2 ** 31 + 10);
    assert.equal(((await longest.outcome()) as { error: Error }).error.message, TIMED_OUT(2 ** 31 - 1));
    assert.equal(await beyond.outcome(), 'pending');
    held.release();
    assert.notEqual(await beyond.outcome(), 'pending');
  });

  it('leaves the line at the deadline, asked for no more', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const asked: (string | undefined)[] = [];
    const line = new WaitQueue((partition) => {
      asked.push(partition);
      return undefined;
    }, 1000);
    const stuck = watch(line.join(waitFor('stuck', 100)));
    t.mock.timers.tick(100);
    assert.equal(
      ((await stuck.outcome()) as { error: { code: string } }).error.code,
      'ERR_TOLLGATE_WAIT_TIMEOUT',
    );
    assert.equal(line.length, 0);
    t.mock.timers.tick(1000);
    assert.deepEqual(asked, ['stuck']);
  });

  it('rejects with the signal reason when it aborts, leaving the line', async () => {
    const { policy, hold } = limitOf(1);
    const held = hold();
    const controller = new AbortController();
    const reason = new Error('gave up');
    const waiting = watch(policy.queue(waitFor(undefined, NO_DEADLINE, controller.signal)));
    controller.abort(reason);
    const outcome = (await waiting.outcome()) as { error: unknown };
    assert.equal(outcome.error, reason);
    held.release();
    assert.equal(policy.inFlight, 0);
    assert.equal(policy.admit(undefined).result.allowed, true);
  });

  it('keeps a granted slot when the signal aborts afterwards', async () => {
    const { policy } = limitOf(1);
    const controller = new AbortController();
    const { slot } = await policy.queue(waitFor(undefined, NO_DEADLINE, controller.signal));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    controller.abort(new Error('too late'));
    assert.equal(policy.inFlight, 1);
    slot?.release();
    assert.equal(policy.inFlight, 0);
  });

  it('rejects at once for a signal already aborted, taking nothing', async () => {
    const { policy } = limitOf(1);
    const reason = new Error('already gone');
    await assert.rejects(
      async () => policy.queue(waitFor(undefined, NO_DEADLINE, AbortSignal.abort(reason))),
      reason,
    );
    assert.equal(policy.inFlight, 0);
  });

  it('returns a rejected promise, rather than throwing, for a signal already aborted', {}, () => {
    const { policy } = limitOf(1);
    const reason = new Error('already gone');
    const queued = policy.queue(waitFor(undefined, NO_DEADLINE, AbortSignal.abort(reason)));
    queued.catch(() => {});
    assert.ok(queued instanceof Promise);
  });
});
