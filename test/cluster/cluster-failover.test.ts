// A cluster master dies: only its slots fail closed, the others keep enforcing, and failover brings them back.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createLimiter, type Decision, fixedWindow, type Limiter } from '../../src/index.js';
import { bucketKeys } from '../../src/stores/key.js';
import type { RedisFixture } from '../contract/differential.js';
import {
  addressOf,
  needsOwnCluster,
  type RedisCluster,
  startRedisCluster,
} from '../harness/redis-cluster.js';
import { describeWithRedisCluster } from '../harness/suite.js';
import {
  type ClusterClient,
  FAST_FAILURE,
  idsByMaster,
  openClusterStore,
  quietLogger,
} from './cluster-stores.js';

/** Distinct from the default so the test sees this store's setting, not a coincidence. */
const RETRY_AFTER_MS = 1500;
/** Above commandTimeoutMs: room for a loaded 2-core CI machine, yet below connectTimeoutMs (what a hang would cost). */
const BOUND_MS = FAST_FAILURE.commandTimeoutMs + 700;
const RECOVERY_TIMEOUT_MS = 15_000;
const CLIENTS: readonly ClusterClient[] = ['ioredis, own connection', 'node-redis, app-owned'];
const TITLE = 'fails closed on the dead master only, keeps enforcing elsewhere, recovers after failover';
const skip = needsOwnCluster('kills a node');

interface Subject {
  readonly client: ClusterClient;
  readonly fixture: RedisFixture;
  readonly limiter: Limiter;
  /** Per master "host:port": an identifier warmed before the kill, one for during, one for after the failover. */
  readonly ids: Map<string, string[]>;
}

async function timed(limiter: Limiter, id: string): Promise<{ decision: Decision; ms: number }> {
  const started = performance.now();
  const decision = await limiter.consume(id);
  return { decision, ms: performance.now() - started };
}

/** Four consumes against a limit of 3: real decisions that admit three and deny the fourth. */
async function assertEnforcing(subject: Subject, id: string, when: string): Promise<void> {
  const decisions: Decision[] = [];
  for (let i = 0; i < 4; i++) decisions.push(await subject.limiter.consume(id));
  assert.deepEqual(
    decisions.map((d) => [d.allowed, d.degraded]),
    [
      [true, undefined],
      [true, undefined],
      [true, undefined],
      [false, undefined],
    ],
    `${subject.client}, ${id} ${when}`,
  );
}

describeWithRedisCluster('a downed cluster master degrades only its own slots', () => {
  let cluster: RedisCluster;
  const subjects: Subject[] = [];
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => cluster?.stop());

  it(TITLE, { skip }, async (t) => {
    for (const client of CLIENTS) {
      const fixture = await openClusterStore(client, cluster, {
        ...FAST_FAILURE,
        failOpen: false,
        degradedRetryAfterMs: RETRY_AFTER_MS,
        logger: quietLogger,
      });
      t.after(() => fixture.close());
      const limiter = createLimiter({
        policy: fixedWindow({ limit: 3, windowMs: '1m' }),
        store: fixture.store,
        scope: 'failover',
      });
      const ids = await idsByMaster(cluster, fixture.store, limiter, 'id', 3);
      subjects.push({ client, fixture, limiter, ids });
    }
    const [first] = subjects;
    assert.ok(first);
    const chosenKey =
      first.fixture.store.keyPrefix + bucketKeys('failover', 'chosen', first.limiter.policies)[0];
    const victim = await cluster.masterForKey(chosenKey);
    const dead = addressOf(victim);

    // Every store has a connection to every master and the script loaded there before anything breaks.
    for (const subject of subjects) {
      for (const [warm] of subject.ids.values()) {
        assert.equal((await subject.limiter.consume(warm as string)).degraded, undefined, 'healthy at first');
      }
    }

    await cluster.killNode(victim);
    const killedAt = performance.now();

    await Promise.all(
      subjects.map(async (subject) => {
        const { store } = subject.fixture;
        const denied = store.metrics.degradedDenied;
        const onDead = subject.ids.get(dead)?.[1] as string;
        const live = [...subject.ids]
          .filter(([master]) => master !== dead)
          .map(([, ids]) => ids[1] as string);
        // Concurrently, so a live master's decisions cannot hide behind the dead one's timeouts.
        const [failed] = await Promise.all([
          (async () => {
            const answers = [];
            for (let i = 0; i < 6; i++) answers.push(await timed(subject.limiter, onDead));
            return answers;
          })(),
          ...live.map((id) => assertEnforcing(subject, id, 'on a live master while another is down')),
        ]);
        for (const { decision, ms } of failed) {
          assert.equal(decision.degraded, 'fail-closed', subject.client);
          assert.equal(decision.allowed, false);
          assert.equal(decision.retryAfterMs, RETRY_AFTER_MS);
          assert.ok(ms < BOUND_MS, `${subject.client}: a decision for the dead master took ${ms} ms`);
        }
        assert.equal(store.metrics.degradedDenied - denied, failed.length, 'only the dead master degraded');
      }),
    );

    assert.equal((await first.limiter.consume('chosen')).degraded, 'fail-closed', 'the chosen identifier');

    await cluster.waitForFailover(victim);
    const failoverAt = performance.now();
    t.diagnostic(`failover complete ${Math.round(failoverAt - killedAt)} ms after the kill`);
    await Promise.all(
      subjects.map(async (subject) => {
        const [warm, , fresh] = subject.ids.get(dead) as string[];
        // Peeks spend nothing, so the polling cannot use up the quota checked below.
        const deadline = Date.now() + RECOVERY_TIMEOUT_MS;
        while ((await subject.limiter.peek(warm as string)).degraded !== undefined) {
          assert.ok(
            Date.now() < deadline,
            `${subject.client}: no recovery ${RECOVERY_TIMEOUT_MS} ms after failover`,
          );
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        t.diagnostic(
          `${subject.client}: real decisions again ${Math.round(performance.now() - failoverAt)} ms later`,
        );
        await assertEnforcing(subject, fresh as string, 'on the promoted replica');
      }),
    );
  });
});
