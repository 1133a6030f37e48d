// A cluster node's batch that waits for a call in flight waits once: it goes as soon as the node takes another call.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { createLimiter, tokenBucket } from '../../../src/index.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { connectedIoredis } from '../../harness/fake-ioredis.js';

const NOW = 1_000_000;
const POLICY = tokenBucket({ capacity: 5, refillPerSecond: 1 });

/** A one-master ioredis-shaped cluster whose node answers each call when the test says so. */
function heldCluster() {
  const calls: { readonly count: number; readonly answer: () => void }[] = [];
  const master = {
    options: { host: '10.0.0.1', port: 6379 },
    call: (command: string, _name: string, _declared: string, _now: string, _spec: string, count: string) => {
      if (command !== 'FCALL') return Promise.resolve('OK');
      const decisions = Number(count);
      const reply = [NOW, ...Array.from({ length: decisions }, () => [1, 4, 1000, 0]).flat()];
      return new Promise((resolve) => calls.push({ count: decisions, answer: () => resolve(reply) }));
    },
  };
  const client = connectedIoredis({
    isCluster: true,
    slots: Array.from({ length: 16_384 }, () => ['10.0.0.1:6379']),
    nodes: () => [master],
    fcall: () => Promise.resolve([NOW, 1, 4, 1000, 0]),
    evalsha: () => Promise.reject(new Error('unexpected EVALSHA')),
    eval: () => Promise.reject(new Error('unexpected EVAL')),
  });
  return { client, calls };
}

it('a batch that waited for a call to its node goes when the node takes another call, however small', async () => {
  const { client, calls } = heldCluster();
  const store = new RedisStore({ client: client as never, clock: () => NOW, commandTimeoutMs: 5000 });
  await store.connect();
  const busy = createLimiter({ policy: POLICY, store, scope: 'busy' });
  const quiet = createLimiter({ policy: POLICY, store, scope: 'quiet' });
  let next = 0;
  // Full batches go whatever is in flight.
  const full = () => Promise.all(Array.from({ length: 32 }, () => busy.consume(`b${next++}`)));
  const decided = [full(), full()];
  await turn();
  const lone = quiet.consume('q');
  await turn();
  assert.deepEqual(
    calls.map(({ count }) => count),
    [32, 32],
    'a lone decision waits while two calls to its node are in flight',
  );
  decided.push(full());
  await turn();
  // Calls keep ending and starting, never fewer than one in flight: the lone batch must not wait for none.
  (calls[0] as { answer: () => void }).answer();
  (calls[1] as { answer: () => void }).answer();
  await turn();
  await turn();
  assert.deepEqual(
    calls.map(({ count }) => count),
    [32, 32, 32, 1],
  );
  for (const call of calls.slice(2)) call.answer();
  assert.equal((await lone).degraded, undefined);
  await Promise.all(decided);
  await store.close();
});
