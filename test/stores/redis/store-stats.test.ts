// RedisStore's stats() over a client whose script calls the test answers: each failure counted once by its kind,
// batches and their sizes, script reloads, deny-cache hits and the breaker, without a Redis server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TollgateError } from '../../../src/core/errors.js';
import { createLimiter, tokenBucket } from '../../../src/index.js';
import { errorKind, scriptError } from '../../../src/stores/redis/metrics.js';
import { RedisStore } from '../../../src/stores/redis/redis-store.js';
import { connectedIoredis } from '../../harness/fake-ioredis.js';

const NOW = 1_000_000;
/** One token-bucket consume in the script's reply: allowed, remaining, reset, then the delay if admitted, else the retry. */
const ALLOWED = [1, 0, 1000, 0];
const DENIED = [0, 0, 1000, 1000];

type Answer = (decisions: number) => Promise<unknown>;

/** An ioredis-shaped client: each script call is answered by the current `answer`, EVALSHA and EVAL alike. */
function scriptedClient() {
  let answer: Answer = (decisions) =>
    Promise.resolve([NOW, ...Array.from({ length: decisions }, () => ALLOWED).flat()]);
  let evalshaAnswer: Answer | undefined;
  const call = (keys: number) => answer(keys);
  const client = connectedIoredis({
    evalsha: (_sha: string, keys: number) => {
      const once = evalshaAnswer;
      evalshaAnswer = undefined;
      return once === undefined ? call(keys) : once(keys);
    },
    eval: (_script: string, keys: number) => call(keys),
  });
  return {
    client,
    answer: (next: Answer) => {
      answer = next;
    },
    /** The next EVALSHA only (EVAL keeps the usual answer). */
    answerEvalshaOnce: (next: Answer) => {
      evalshaAnswer = next;
    },
  };
}

const rejects = (message: string) => () => Promise.reject(new Error(message));

describe('RedisStore.stats()', () => {
  it('starts at zero, with one closed breaker for the whole store', async () => {
    const { client } = scriptedClient();
    const store = new RedisStore({ client });
    assert.deepEqual(store.stats(), {
      timeouts: 0,
      errors: { timeout: 0, connection: 0, reply: 0, script: 0 },
      breakers: [{ node: '', open: false }],
      breakerTrips: 0,
      scriptReloads: 0,
      batches: 0,
      batchedDecisions: 0,
      denyCacheHits: 0,
    });
    await store.close();
  });

  it('counts batches, reloads, deny-cache hits, each failed call by kind, and the breaker it trips', async () => {
    const scripted = scriptedClient();
    const store = new RedisStore({
      client: scripted.client,
      clock: () => NOW,
      commandTimeoutMs: 50,
      breakerThreshold: 5,
      reconnectCooldownMs: 60_000,
      logger: { warn: () => {}, error: () => {} },
    });
    try {
      const limiter = createLimiter({ policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }), store });
      assert.equal((await limiter.consume('a')).allowed, true);
      // Two decisions of one turn: one batch of two.
      await Promise.all([limiter.consume('a'), limiter.consume('b')]);
      scripted.answerEvalshaOnce(rejects('NOSCRIPT No matching script. Please use EVAL.'));
      assert.equal((await limiter.consume('a')).allowed, true);
      scripted.answer(() => Promise.resolve([NOW, ...DENIED]));
      assert.equal((await limiter.consume('c')).allowed, false);
      // The same denial again, answered by the deny cache: no batch.
      assert.equal((await limiter.consume('c')).allowed, false);
      scripted.answer(rejects("OOM command not allowed when used memory > 'maxmemory'."));
      assert.equal((await limiter.consume('d')).degraded, 'fail-open');
      // A decision the script answered with an error: Redis's own for a command it ran, then a Lua error.
      const failedDecision = (error: string) => () => Promise.resolve([NOW, error, 0, 0, 0]);
      scripted.answer(failedDecision('WRONGTYPE Operation against a key holding the wrong kind of value'));
      assert.equal((await limiter.consume('d')).degraded, 'fail-open');
      scripted.answer(failedDecision('user_script:57: attempt to perform arithmetic on a nil value'));
      assert.equal((await limiter.consume('d')).degraded, 'fail-open');
      scripted.answer(rejects('Connection is closed.'));
      assert.equal((await limiter.consume('d')).degraded, 'fail-open');
      scripted.answer(() => new Promise(() => {}));
      assert.equal((await limiter.consume('d')).degraded, 'fail-open');
      // Five failed calls in a row open the breaker: what follows is answered without a call.
      assert.equal((await limiter.consume('d')).degraded, 'fail-open');
      assert.deepEqual(store.stats(), {
        timeouts: 1,
        errors: { timeout: 1, connection: 1, reply: 2, script: 1 },
        breakers: [{ node: '', open: true }],
        breakerTrips: 1,
        scriptReloads: 1,
        batches: 9,
        batchedDecisions: 10,
        denyCacheHits: 1,
      });
    } finally {
      await store.close();
    }
  });
});

describe('errorKind', () => {
  it('tells a timeout, a Redis error reply, a script error and a connection apart', () => {
    assert.equal(
      errorKind(new TollgateError('ERR_TOLLGATE_TIMEOUT', 'Redis did not answer within 50 ms')),
      'timeout',
    );
    assert.equal(errorKind(new TollgateError('ERR_TOLLGATE_STORE', 'Redis is not connected')), 'connection');
    for (const reply of [
      "READONLY You can't write against a read only replica.",
      'CLUSTERDOWN The cluster is down',
      'BUSY',
    ])
      assert.equal(errorKind(new Error(reply)), 'reply', reply);
    assert.equal(errorKind(scriptError('user_script:1: attempt to compare nil with number')), 'script');
    // Redis's refusal of a command the script ran, passed on by the script.
    assert.equal(errorKind(scriptError("OOM command not allowed when used memory > 'maxmemory'.")), 'reply');
    // The same message from elsewhere is no script's.
    assert.equal(errorKind(new Error('user_script:1: attempt to compare nil with number')), 'connection');
    assert.equal(errorKind(Object.assign(new Error('EPIPE'), { syscall: 'write' })), 'connection');
    assert.equal(errorKind(new Error('connect ECONNREFUSED 127.0.0.1:6390')), 'connection');
    assert.equal(errorKind('gone'), 'connection');
  });
});
