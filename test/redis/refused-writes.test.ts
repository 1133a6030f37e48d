// A Redis that answers but refuses writes (out of memory, a read-only replica, a failed snapshot): PING works, every
// decision fails. The breaker must stay open, each fail mode must hold its promise, and health() must say so.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLimiter, type Decision, tokenBucket } from '../../src/index.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedisServer } from '../harness/redis-server.js';
import { describeWithRedis } from '../harness/suite.js';

const PROBE_MS = 50;
const quiet = { warn: () => {}, error: () => {} };

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A live Redis for the store, a way to make it refuse writes while it still answers PING, and the way back. */
interface Subject {
  readonly target: RedisServer;
  refuse(): Promise<void>;
  restore(): Promise<void>;
}
type Cleanup = (fn: () => Promise<unknown>) => void;

const CONDITIONS: Record<string, (cleanup: Cleanup) => Promise<Subject>> = {
  'out of memory (maxmemory reached, noeviction)': async (cleanup) => {
    const target = await startRedisServer();
    cleanup(() => target.stop());
    return {
      target,
      refuse: async () => {
        await target.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
        await target.command('CONFIG', 'SET', 'maxmemory', '1');
      },
      restore: async () => {
        await target.command('CONFIG', 'SET', 'maxmemory', '0');
      },
    };
  },
  'a read-only replica': async (cleanup) => {
    // No wait for more replicas before the first sync (the default waits 5 s).
    const primary = await startRedisServer({ args: ['--repl-diskless-sync-delay', '0'] });
    cleanup(() => primary.stop());
    const target = await startRedisServer();
    cleanup(() => target.stop());
    return {
      target,
      // The store's server starts following another: reads still answer, writes are refused.
      refuse: async () => {
        await target.command('REPLICAOF', primary.host, String(primary.port));
        await waitFor('the replica to sync', async () =>
          (await target.command('INFO', 'replication')).includes('master_link_status:up'),
        );
      },
      restore: async () => {
        await target.command('REPLICAOF', 'NO', 'ONE');
      },
    };
  },
  'a failed snapshot (MISCONF)': async (cleanup) => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-misconf-'));
    cleanup(() => rm(dir, { recursive: true, force: true }));
    const target = await startRedisServer({ args: ['--dir', dir] });
    cleanup(() => target.stop());
    return {
      target,
      // Snapshots on, and nowhere to write them: the BGSAVE fails and Redis stops accepting writes.
      refuse: async () => {
        await target.command('CONFIG', 'SET', 'save', '3600 1');
        await rm(dir, { recursive: true, force: true });
        await target.command('BGSAVE');
        await waitFor('the snapshot to fail', async () =>
          (await target.command('INFO', 'persistence')).includes('rdb_last_bgsave_status:err'),
        );
      },
      restore: async () => {
        await target.command('CONFIG', 'SET', 'stop-writes-on-bgsave-error', 'no');
        // Nor a snapshot at shutdown, which would fail and hold the server up.
        await target.command('CONFIG', 'SET', 'save', '');
      },
    };
  },
};

type Mode = 'fail open' | 'fail closed' | 'memory fallback';
const MODES: Record<Mode, Partial<RedisStoreOptions>> = {
  'fail open': { failOpen: true },
  'fail closed': { failOpen: false },
  'memory fallback': { fallback: 'memory' },
};

describeWithRedis('a Redis that answers but refuses writes', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = (fn: () => Promise<unknown>) => cleanups.push(fn);
  const release = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
  };
  afterEach(release);
  after(release);

  for (const [label, start] of Object.entries(CONDITIONS)) {
    describe(label, () => {
      for (const [mode, options] of Object.entries(MODES) as [Mode, Partial<RedisStoreOptions>][]) {
        it(`${mode}: every decision is the fail mode's, the breaker stays open, health() reports it`, async () => {
          const { target, refuse, restore } = await start(cleanup);
          const store = new RedisStore({
            url: target.url,
            commandTimeoutMs: 2000,
            reconnectCooldownMs: PROBE_MS,
            logger: quiet,
            ...options,
          });
          cleanup(() => store.close());
          await store.connect();
          // Also when a check fails: a server left with snapshots on and nowhere to write them refuses SIGTERM,
          // and its stop then waits out the grace period.
          cleanup(restore);
          await refuse();
          assert.equal(await target.command('EXISTS', 'anything'), '0', 'the server still answers reads');
          // Five a minute: over the next second no refill changes what is admitted.
          const limiter = createLimiter({
            policy: tokenBucket({ capacity: 5, requestsPerMinute: 5 }),
            store,
          });
          const decisions: Decision[] = [];
          // Requests spread over several probe intervals: time for a breaker that flaps to flap.
          for (let i = 0; i < 30; i++) {
            decisions.push(await limiter.consume('client'));
            await sleep(PROBE_MS / 4);
          }
          const expected =
            mode === 'fail open' ? 'fail-open' : mode === 'fail closed' ? 'fail-closed' : 'fallback';
          assert.deepEqual(new Set(decisions.map((d) => d.degraded)), new Set([expected]));
          const admitted = decisions.filter((d) => d.allowed).length;
          assert.equal(admitted, mode === 'fail open' ? 30 : mode === 'fail closed' ? 0 : 5);
          assert.equal(store.breakerOpen, true, 'the probe writes, so it fails as the decisions do');
          assert.equal(store.metrics.breakerTrips, 1, 'the breaker never closed in between');
          const health = await store.health();
          assert.equal(health.ok, false);
          assert.match(health.error ?? '', /failing decisions/);

          await restore();
          await waitFor('the breaker to close', () => !store.breakerOpen);
          const recovered = await limiter.consume('client');
          assert.equal(recovered.degraded, undefined);
          assert.equal((await store.health()).ok, true);
        });
      }
    });
  }
});
