// Rate limits stay exact while a real cluster reshards, fails over and grows under multi-process load.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it, type TestContext } from 'node:test';
import {
  addressOf,
  needsOwnCluster,
  type RedisCluster,
  type RedisClusterNode,
  startRedisCluster,
} from '../harness/redis-cluster.js';
import { redisCli } from '../harness/redis-server.js';
import { describeWithRedisCluster } from '../harness/suite.js';
import { assertExact, idsInSlots, LoadPool, slotOf, sumTallies, type Totals } from './resharding-load.js';
import type { Group } from './resharding-worker.js';
import {
  masterOfSlot,
  moveSlots,
  type Redirections,
  redirections,
  resetRedirections,
} from './slot-migration.js';

const WORKERS = 4;
const IN_FLIGHT = 50;
/** The hot identifier: 4 x 50 of its consumes a pass against this limit, so it runs out during the change. */
const HOT = { limit: 300, perPass: 50 };
/** Every other identifier: 4 consumes a pass, so each runs out in the third pass, after the change began. */
const SPREAD = { limit: 10, perPass: 1 };
const SPREAD_IDS = 1000;
/**
 * Passes each worker makes once the change is over: all but the one in progress start after it, and their demand
 * alone (3 x 4 x 1 consumes of each identifier, 3 x 4 x 50 of the hot one) exceeds every limit, so each identifier
 * runs out in real decisions even if every decision before had been answered by the fail mode.
 */
const PASSES_AFTER = 4;
/** Traffic bounds should the test never stop it; far above what a run takes. */
const MAX_PASSES = 100;
const MAX_MS = 40_000;
const PASS_TIMEOUT_MS = 20_000;
const skip = needsOwnCluster('reshards and fails over');

interface Outcome {
  readonly totals: Totals;
  readonly redirected: Redirections;
}

/** What every scenario shares: the cluster and the worker processes, started once for the file. */
interface Env {
  cluster: RedisCluster;
  pool: LoadPool;
  /** Every worker's store writes under it; each scenario has scopes of its own. */
  readonly keyPrefix: string;
}

/** One hot identifier and the others; `watch` picks the identifiers whose slots the change concerns. */
function groups(
  env: Env,
  name: string,
  hot: string,
  spread: readonly string[],
  watch: (slot: number) => boolean,
) {
  const scope = (kind: string) => `${name}-${kind}`;
  const watched = (ids: readonly string[], kind: string) =>
    ids.flatMap((id, i) => (watch(slotOf(env.keyPrefix, scope(kind), id)) ? [i] : []));
  return [
    { scope: scope('hot'), ...HOT, ids: [hot], watched: watched([hot], 'hot') },
    { scope: scope('spread'), ...SPREAD, ids: spread, watched: watched(spread, 'spread') },
  ] satisfies Group[];
}

/**
 * Runs `change` once every worker has made a full pass (every bucket exists on its first owner, partly spent),
 * then lets each worker make PASSES_AFTER more passes, so that the buckets moved run out on their new owner.
 */
async function underLoad(
  { cluster, pool }: Env,
  t: TestContext,
  load: Group[],
  change: () => Promise<void>,
): Promise<Outcome> {
  const run = pool.run({ groups: load, maxPasses: MAX_PASSES, maxMs: MAX_MS });
  await run.until(1, PASS_TIMEOUT_MS);
  await resetRedirections(cluster);
  const startedAt = Date.now();
  const passesAtStart = run.passes();
  await change();
  const window = [startedAt, Date.now()] as const;
  const passesAtEnd = run.passes();
  await run.until(
    passesAtEnd.map((passes) => passes + PASSES_AFTER),
    PASS_TIMEOUT_MS,
  );
  const totals = sumTallies(await run.stop(window));
  const redirected = await redirections(cluster);
  t.diagnostic(
    `change took ${window[1] - window[0]} ms, during passes ${passesAtStart} to ${passesAtEnd}; ` +
      `redirections ${JSON.stringify(redirected)}; watched decisions ${JSON.stringify(totals.watched)}; ` +
      `denied ${totals.denied}, degraded ${totals.degraded}, store errors ${totals.errors}, ` +
      `resent slot by slot ${totals.resentBySlot}`,
  );
  return { totals, redirected };
}

/** The decisions the change concerned went on during it and after it, and every limit held exactly. */
function assertOutcome(load: Group[], { totals }: Outcome): void {
  assert.ok(
    totals.watched.during > 0,
    'no decision on the identifiers concerned completed during the change',
  );
  assert.ok(totals.watched.after > 0, 'no decision on the identifiers concerned completed after the change');
  assertExact(load, totals);
}

async function moveHotSlot(env: Env, t: TestContext): Promise<void> {
  const { cluster, keyPrefix } = env;
  const [hot = ''] = idsInSlots(keyPrefix, 'move-hot-hot', 'hot', 1);
  const hotSlot = slotOf(keyPrefix, 'move-hot-hot', hot);
  const spread = idsInSlots(keyPrefix, 'move-hot-spread', 'id', SPREAD_IDS);
  const load = groups(env, 'move-hot', hot, spread, (slot) => slot === hotSlot);
  const from = await masterOfSlot(cluster, hotSlot);
  const to = (await cluster.masters()).find(
    (node) => addressOf(node) !== addressOf(from),
  ) as RedisClusterNode;
  const outcome = await underLoad(env, t, load, async () => {
    // One key: the pauses are what keep the slot open while the workers decide on it.
    await moveSlots(cluster, [hotSlot], from, to, { keysPerMigrate: 1, pauseMs: 400 });
  });
  assert.equal(addressOf(await masterOfSlot(cluster, hotSlot)), addressOf(to));
  // Decisions made on the target while the slot was open, and clients told of the new owner after.
  assert.ok(outcome.redirected.asking > 0, 'no decision was sent to the importing master');
  assert.ok(outcome.redirected.moved > 0, 'no client was redirected to the new owner');
  // A call to a node that carried a decision of the moving slot had it sent again in a call of its slot.
  assert.ok(outcome.totals.resentBySlot > 0, 'no call to a node met the moving slot');
  assertOutcome(load, outcome);
}

async function moveSlotRange(env: Env, t: TestContext): Promise<void> {
  const { cluster, keyPrefix } = env;
  const [, from, to] = (await cluster.masters()) as [RedisClusterNode, RedisClusterNode, RedisClusterNode];
  // About 8 identifiers a slot: calls that carry several keys of one slot meet keys split between two masters.
  const range = (await cluster.slotsOf(from)).slice(2000, 2064);
  const moving = new Set(range);
  const inRange = idsInSlots(keyPrefix, 'move-range-spread', 'in', SPREAD_IDS / 2, moving);
  const elsewhere = idsInSlots(keyPrefix, 'move-range-spread', 'out', SPREAD_IDS / 2);
  const [hot = ''] = idsInSlots(keyPrefix, 'move-range-hot', 'hot', 1, moving);
  const load = groups(env, 'move-range', hot, [...inRange, ...elsewhere], (slot) => moving.has(slot));
  const outcome = await underLoad(env, t, load, async () => {
    const times = await moveSlots(cluster, range, from, to, { keysPerMigrate: 4, pauseMs: 0 });
    t.diagnostic(`${times.keysMoved} keys moved in ${times.migratedAt - times.openedAt} ms`);
  });
  assert.deepEqual(
    (await cluster.slotsOf(to)).filter((slot) => moving.has(slot)),
    range,
  );
  assert.ok(outcome.redirected.asking > 0, 'no decision was sent to the importing master');
  assert.ok(outcome.totals.watched.duringAdmitted > 0, 'no admission was decided while the slots moved');
  assertOutcome(load, outcome);
}

async function failOver(env: Env, t: TestContext): Promise<void> {
  const { cluster, keyPrefix } = env;
  const [hot = ''] = idsInSlots(keyPrefix, 'failover-hot', 'hot', 1);
  const hotSlot = slotOf(keyPrefix, 'failover-hot', hot);
  const master = await masterOfSlot(cluster, hotSlot);
  const owned = new Set(await cluster.slotsOf(master));
  const spread = idsInSlots(keyPrefix, 'failover-spread', 'id', SPREAD_IDS);
  const load = groups(env, 'failover', hot, spread, (slot) => owned.has(slot));
  const replica = await cluster.replicaOf(master);
  const outcome = await underLoad(env, t, load, () => cluster.failover(replica));
  assert.equal(addressOf(await masterOfSlot(cluster, hotSlot)), addressOf(replica));
  assert.ok(outcome.redirected.moved > 0, 'no client was redirected to the promoted replica');
  assertOutcome(load, outcome);
}

async function growCluster(env: Env, t: TestContext): Promise<void> {
  const { cluster, keyPrefix } = env;
  const added = await cluster.addNode();
  const [from] = (await cluster.masters()) as [RedisClusterNode];
  // redis-cli moves the source's lowest slots: the identifiers are chosen there.
  const count = 32;
  const moving = new Set((await cluster.slotsOf(from)).slice(0, count));
  const [hot = ''] = idsInSlots(keyPrefix, 'grow-hot', 'hot', 1, moving);
  const inRange = idsInSlots(keyPrefix, 'grow-spread', 'in', SPREAD_IDS / 2, moving);
  const elsewhere = idsInSlots(keyPrefix, 'grow-spread', 'out', SPREAD_IDS / 2);
  const load = groups(env, 'grow', hot, [...inRange, ...elsewhere], (slot) => moving.has(slot));
  const [fromId, toId] = await Promise.all([cluster.nodeId(from), cluster.nodeId(added)]);
  const reshard = ['reshard', addressOf(from), '--cluster-from', fromId, '--cluster-to', toId];
  const outcome = await underLoad(env, t, load, async () => {
    // One key per MIGRATE keeps each slot open across several of the workers' decisions on it.
    const options = ['--cluster-slots', String(count), '--cluster-yes', '--cluster-pipeline', '1'];
    await redisCli([], ['--cluster', ...reshard, ...options]);
    await cluster.waitForAgreement();
  });
  assert.deepEqual(new Set(await cluster.slotsOf(added)), moving);
  assert.ok(outcome.redirected.asking > 0, 'no decision was sent to the new master while slots moved');
  assertOutcome(load, outcome);
}

describeWithRedisCluster('exact limits while the cluster changes under load', () => {
  const env = { keyPrefix: `tg-${randomUUID().slice(0, 8)}:` } as Env;
  before(async () => {
    if (skip !== false) return;
    env.cluster = await startRedisCluster();
    const { rootNodes } = env.cluster;
    env.pool = await LoadPool.start(WORKERS, { rootNodes, keyPrefix: env.keyPrefix, inFlight: IN_FLIGHT });
  });
  after(async () => {
    try {
      await env.pool?.close();
    } finally {
      await env.cluster?.stop();
    }
  });

  // In this order on one cluster: each change starts from the topology the one before left.
  it('moves the hot identifier slot to another master while 4 processes flood it', { skip }, (t) =>
    moveHotSlot(env, t),
  );
  it('moves a range of slots holding 1,000 identifiers buckets while they are spent', { skip }, (t) =>
    moveSlotRange(env, t),
  );
  it('fails the hot identifier master over to its replica under load', { skip }, (t) => failOver(env, t));
  it('adds a master and reshards the hot slots onto it with redis-cli under load', { skip }, (t) =>
    growCluster(env, t),
  );
});
