// Calls per cluster node: where they cannot run, the store sends the same decisions slot by slot, and keeps doing so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLimiter, tokenBucket } from '../../../src/index.js';
import { bucketKeys } from '../../../src/stores/key.js';
import { clusterSlot } from '../../../src/stores/redis/cluster-slot.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { connectedIoredis } from '../../harness/fake-ioredis.js';

const NOW = 1_000_000;
const ADMITTED = [1, 4, 1000, 0];
const CROSS_SLOT = 'ERR Script attempted to access keys that do not hash to the same slot script: f';

/** A one-master ioredis-shaped cluster whose node answers calls to it as `node` says; calls by key admit. */
function fakeCluster(node: (keys: number) => unknown[] | Error) {
  const calls: string[] = [];
  const master = {
    options: { host: '10.0.0.1', port: 6379 },
    call: (command: string, _name: string, _declared: string, _now: string, _spec: string, count: string) => {
      if (command !== 'FCALL') return Promise.resolve('OK');
      calls.push('node call');
      const reply = node(Number(count));
      return reply instanceof Error ? Promise.reject(reply) : Promise.resolve(reply);
    },
    scanStream: () => [],
  };
  const client = connectedIoredis({
    isCluster: true,
    slots: Array.from({ length: 16_384 }, () => ['10.0.0.1:6379']),
    nodes: () => [master],
    fcall: (_name: string, keys: number) => {
      calls.push(`call of slot ${keys}`);
      return Promise.resolve([NOW, ...ADMITTED]);
    },
    evalsha: () => {
      calls.push('script');
      return Promise.resolve([NOW, ...ADMITTED]);
    },
    eval: () => Promise.reject(new Error('unexpected EVAL')),
  });
  return { client, calls };
}

const POLICY = tokenBucket({ capacity: 5, refillPerSecond: 1 });

/** Identifiers whose keys lie in `count` different slots. */
function idsInSlots(store: RedisStore, count: number): string[] {
  const ids: string[] = [];
  const slots = new Set<number>();
  for (let n = 0; ids.length < count; n++) {
    const slot = clusterSlot(store.keyPrefix + bucketKeys('t', `id-${n}`, [POLICY])[0]);
    if (slots.has(slot)) continue;
    slots.add(slot);
    ids.push(`id-${n}`);
  }
  return ids;
}

async function decideTogether(node: (keys: number) => unknown[] | Error) {
  const { client, calls } = fakeCluster(node);
  const store = new RedisStore({ client: client as never, clock: () => NOW });
  const limiter = createLimiter({ policy: POLICY, store, scope: 't' });
  const ids = idsInSlots(store, 3);
  // Until the store has a connection of its own to the cluster it knows no node: its first call is by slot.
  await store.connect();
  const round = async () =>
    (await Promise.all(ids.map((id) => limiter.consume(id)))).map((d) => [d.allowed, d.degraded]);
  return { calls, store, round };
}

describe('calls per cluster node, where they cannot run', () => {
  it('a server that refuses keys of several slots gets the decisions slot by slot, from then on', async () => {
    const { calls, store, round } = await decideTogether((count) => [
      NOW,
      ...Array.from({ length: count }, () => [CROSS_SLOT, 0, 0, 0]).flat(),
    ]);
    assert.deepEqual(await round(), [
      [true, undefined],
      [true, undefined],
      [true, undefined],
    ]);
    assert.deepEqual(calls, ['node call', 'call of slot 1', 'call of slot 1', 'call of slot 1']);
    assert.equal(store.metrics.resentBySlot, 3);
    calls.length = 0;
    await round();
    assert.deepEqual(calls, ['call of slot 1', 'call of slot 1', 'call of slot 1']);
    assert.equal(store.metrics.errors, 0);
  });

  it('a server without functions gets the decisions slot by slot, as a script', async () => {
    const { calls, store, round } = await decideTogether(() => new Error("ERR unknown command 'FCALL'"));
    assert.deepEqual(await round(), [
      [true, undefined],
      [true, undefined],
      [true, undefined],
    ]);
    assert.deepEqual(calls, ['node call', 'script', 'script', 'script']);
    calls.length = 0;
    await round();
    assert.deepEqual(calls, ['script', 'script', 'script']);
    assert.equal(store.metrics.errors, 0);
  });

  it('a decision the node does not serve is sent again in a call of its slot, the others answered', async () => {
    let first = true;
    const { calls, store, round } = await decideTogether((count) => {
      const reply: unknown[] = [NOW, ...Array.from({ length: count }, () => ADMITTED).flat()];
      if (first)
        reply.splice(
          5,
          4,
          'ERR Script attempted to access a non local key in a cluster node script',
          0,
          0,
          0,
        );
      first = false;
      return reply;
    });
    assert.deepEqual(await round(), [
      [true, undefined],
      [true, undefined],
      [true, undefined],
    ]);
    assert.deepEqual(calls, ['node call', 'call of slot 1']);
    assert.equal(store.metrics.resentBySlot, 1);
    calls.length = 0;
    await round();
    assert.deepEqual(calls, ['node call']);
  });
});
