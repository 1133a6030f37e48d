// The circuit breaker on mocked timers: when it opens, how it probes, when it closes, and that it stops for good.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker } from '../../../src/stores/redis/circuit-breaker.js';

/** A breaker with a probe the test answers, and a log of what it did. */
function setup(threshold = 3) {
  const events: string[] = [];
  let answer: () => Promise<void> = () => Promise.reject(new Error('down'));
  const breaker = new CircuitBreaker({
    threshold,
    probeIntervalMs: 1000,
    probe: () => {
      events.push('probe');
      return answer();
    },
    onOpen: () => events.push('open'),
    onClose: () => events.push('close'),
  });
  return { breaker, events, answer: (next: () => Promise<void>) => (answer = next) };
}

/** Lets a settled probe's continuation run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('CircuitBreaker', () => {
  it('opens at the threshold of consecutive failures, once', (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { breaker, events } = setup(3);
    t.after(() => breaker.stop());
    breaker.failure();
    breaker.failure();
    assert.equal(breaker.isOpen, false);
    breaker.failure();
    assert.equal(breaker.isOpen, true);
    breaker.failure();
    assert.deepEqual(events, ['open']);
  });

  it('a success between failures starts the count again', (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { breaker } = setup(2);
    t.after(() => breaker.stop());
    breaker.failure();
    breaker.success();
    breaker.failure();
    assert.equal(breaker.isOpen, false);
    breaker.failure();
    assert.equal(breaker.isOpen, true);
  });

  it('probes once per interval while open, and closes on the first probe that succeeds', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { breaker, events, answer } = setup(1);
    t.after(() => breaker.stop());
    breaker.failure();
    t.mock.timers.tick(999);
    assert.deepEqual(events, ['open']);
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(events, ['open', 'probe']);
    assert.equal(breaker.isOpen, true, 'a failed probe keeps it open');
    answer(() => Promise.resolve());
    t.mock.timers.tick(1000);
    await settle();
    assert.deepEqual(events, ['open', 'probe', 'probe', 'close']);
    assert.equal(breaker.isOpen, false);
    t.mock.timers.tick(5000);
    await settle();
    assert.equal(events.length, 4, 'no probe once closed');
    // Closed with a fresh count: it takes the threshold again to open.
    breaker.failure();
    assert.equal(breaker.isOpen, true);
  });

  it('never runs two probes at once: a slow probe skips the intervals it spans', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { breaker, events, answer } = setup(1);
    t.after(() => breaker.stop());
    let finish = () => {};
    answer(() => new Promise<void>((resolve) => (finish = resolve)));
    breaker.failure();
    t.mock.timers.tick(3000);
    assert.deepEqual(events, ['open', 'probe']);
    finish();
    await settle();
    assert.deepEqual(events, ['open', 'probe', 'close']);
  });

  it('stop() ends the probing for good, and a probe that answers after it closes nothing', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { breaker, events, answer } = setup(1);
    let finish = () => {};
    answer(() => new Promise<void>((resolve) => (finish = resolve)));
    breaker.failure();
    t.mock.timers.tick(1000);
    breaker.stop();
    assert.equal(breaker.isOpen, false);
    finish();
    await settle();
    t.mock.timers.tick(10_000);
    assert.deepEqual(events, ['open', 'probe']);
  });

  it('a close callback that throws neither reopens the breaker nor escapes as an unhandled rejection', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const escaped: unknown[] = [];
    const record = (reason: unknown) => escaped.push(reason);
    process.on('unhandledRejection', record);
    t.after(() => process.off('unhandledRejection', record));
    const breaker = new CircuitBreaker({
      threshold: 1,
      probeIntervalMs: 1000,
      probe: () => Promise.resolve(),
      onOpen: () => {},
      onClose: () => {
        throw new Error('logger failed');
      },
    });
    t.after(() => breaker.stop());
    breaker.failure();
    t.mock.timers.tick(1000);
    await settle();
    await settle();
    assert.equal(breaker.isOpen, false);
    assert.deepEqual(escaped, []);
  });
});
