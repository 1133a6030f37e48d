// wait() on a concurrency limit over Redis: a slot freed by another process is taken within about the poll, not at
// the lease's expiry; a thousand waiters in one process cost about two decisions per admission.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { concurrency, createLimiter, type Decision } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { type RedisServer, signalChild, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';
import { spawnWorker, type WorkerProcess } from '../harness/worker-process.js';
import { LEASE_MS, WAIT_SCOPE, waitPolicy } from './concurrency-wait-policy.js';

const WORKER = fileURLToPath(new URL('./concurrency-wait-worker.ts', import.meta.url));

describeWithRedis('wait() on a concurrency limit over Redis', () => {
  let server: RedisServer;
  const stores: RedisStore[] = [];
  const children: WorkerProcess[] = [];
  const storeOf = () => {
    const store = new RedisStore({ url: server.url, commandTimeoutMs: 5000 });
    stores.push(store);
    return store;
  };

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    for (const child of children) signalChild(child, 'SIGKILL');
    await Promise.all(stores.map((store) => store.close()));
    await server?.stop();
  });

  it('takes a slot another process released within about the poll, well before the lease expires', async (t) => {
    await server.command('DEL', `tg:${WAIT_SCOPE}|client`);
    const worker = spawnWorker(WORKER, { url: server.url }, (child) => children.push(child));
    assert.equal(await worker.nextLine(), 'held');
    const limiter = createLimiter({ policy: waitPolicy(), store: storeOf(), scope: WAIT_SCOPE });
    const waited = limiter.wait('client', { maxWaitMs: LEASE_MS / 2 }).then(() => Date.now());
    await new Promise((resolve) => setTimeout(resolve, 500));
    worker.child.stdin.end('release\n');
    const released = Number((await worker.nextLine()).split(' ')[1]);
    const pickupMs = (await waited) - released;
    t.diagnostic(`picked up ${pickupMs} ms after the other process released the slot`);
    // The poll is 100 ms; a loaded machine may add some, but nothing near the 20 s lease.
    assert.ok(pickupMs < 2000, `picked up ${pickupMs} ms after the release`);
    await worker.closed;
  });

  it('a thousand waiters in one process cost about two decisions per admission, none overtaken', async (t) => {
    const store = storeOf();
    const limiter = createLimiter({ policy: concurrency({ max: 4, leaseMs: LEASE_MS }), store });
    const before = store.metrics.decisions;
    const order: number[] = [];
    const hold = (decision: Decision, i: number) => {
      order.push(i);
      return new Promise<void>((resolve) => setTimeout(resolve, 2)).then(() => decision.release?.());
    };
    await Promise.all(Array.from({ length: 1000 }, (_, i) => limiter.wait('crowd').then((d) => hold(d, i))));
    // Each release is a decision of its own.
    const perAdmission = (store.metrics.decisions - before - 1000) / 1000;
    t.diagnostic(`${perAdmission} decisions per admission`);
    assert.ok(perAdmission <= 3, `${perAdmission} decisions per admission`);
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
      'admitted in the order they came',
    );
  });
});
