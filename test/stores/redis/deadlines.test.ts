// One timer bounds every script call of a store: each call still times out at its own deadline, and only then.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { Deadlines } from '../../../src/stores/redis/time-budget.js';

describe('Deadlines', () => {
  let now = 0;
  const advance = async (ms: number) => {
    now += ms;
    mock.timers.tick(ms);
    // Let the rejections and resolutions the timer caused run.
    await new Promise((resolve) => setImmediate(resolve));
  };
  beforeEach(() => {
    now = 0;
    mock.timers.enable({ apis: ['setTimeout'] });
  });
  afterEach(() => mock.timers.reset());

  /** A call that settles only when told, and what became of it. */
  function call(deadlines: Deadlines) {
    let answer: (value: string) => void = () => {};
    const state: { outcome: string } = { outcome: 'waiting' };
    deadlines.bound(new Promise<string>((resolve) => (answer = resolve))).then(
      (value) => (state.outcome = value),
      (error: Error & { code?: string }) => (state.outcome = error.code ?? error.message),
    );
    return { answer: (value: string) => answer(value), state };
  }

  it('times each call out at its own deadline, counting each', async () => {
    const metrics = { timeouts: 0 };
    const deadlines = new Deadlines(100, metrics, () => now);
    const first = call(deadlines);
    await advance(60);
    const second = call(deadlines);
    await advance(40);
    assert.equal(first.state.outcome, 'ERR_TOLLGATE_TIMEOUT');
    assert.equal(second.state.outcome, 'waiting', 'the later call has 60 ms left');
    await advance(59);
    assert.equal(second.state.outcome, 'waiting');
    await advance(1);
    assert.equal(second.state.outcome, 'ERR_TOLLGATE_TIMEOUT');
    assert.equal(metrics.timeouts, 2);
  });

  it('never times out a call that was answered, in whatever order calls end', async () => {
    const metrics = { timeouts: 0 };
    const deadlines = new Deadlines(100, metrics, () => now);
    const calls = [call(deadlines), call(deadlines), call(deadlines)];
    calls[1]?.answer('b');
    await advance(10);
    calls[0]?.answer('a');
    await advance(50);
    const late = call(deadlines);
    await advance(45);
    assert.deepEqual(
      calls.map((c) => c.state.outcome),
      ['a', 'b', 'ERR_TOLLGATE_TIMEOUT'],
    );
    assert.equal(late.state.outcome, 'waiting');
    late.answer('d');
    // The answer is taken before the clock moves on, as one that arrives in time is.
    await advance(0);
    await advance(200);
    assert.equal(late.state.outcome, 'd');
    assert.equal(metrics.timeouts, 1);
  });
});
