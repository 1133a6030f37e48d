// Moving slots between masters the way redis-cli --cluster reshard does, slowly enough to overlap traffic.
import { setTimeout as sleep } from 'node:timers/promises';
import { addressOf, type RedisCluster, type RedisClusterNode } from '../harness/redis-cluster.js';
import { redisCall } from '../harness/redis-server.js';

export interface MoveOptions {
  /** Keys per MIGRATE (redis-cli's --cluster-pipeline): few keys make a slot stay open longer. */
  readonly keysPerMigrate: number;
  /** Waited after the slots are opened, between MIGRATEs, and before they are handed over. */
  readonly pauseMs: number;
}

/** When each step of a move happened (Date.now(), comparable across the test's processes). */
export interface MoveTimes {
  readonly openedAt: number;
  /** Every key of the slots is on the target; the source still owns the slots. */
  readonly migratedAt: number;
  readonly closedAt: number;
  readonly keysMoved: number;
}

const MIGRATE_TIMEOUT_MS = 5000;

const call = (node: RedisClusterNode, ...args: string[]) => redisCall(node.host, node.port, args);

/**
 * redis-cli's per-slot sequence, with every slot of `slots` open at once: IMPORTING on the target and MIGRATING on
 * the source, then the keys a few at a time, then the new owner announced to the target, the source and every other
 * master. While a slot is open, the source serves the keys it still has and sends clients to the target (ASK) for
 * the others; a call whose keys are split between the two is refused (TRYAGAIN) until they are together.
 */
export async function moveSlots(
  cluster: RedisCluster,
  slots: readonly number[],
  from: RedisClusterNode,
  to: RedisClusterNode,
  options: MoveOptions,
): Promise<MoveTimes> {
  const [fromId, toId] = await Promise.all([cluster.nodeId(from), cluster.nodeId(to)]);
  // Each step on every slot at once (a step waits for the one before): the steps' order is what matters.
  const onEvery = (node: RedisClusterNode, ...args: string[]) =>
    Promise.all(slots.map((slot) => call(node, 'CLUSTER', 'SETSLOT', String(slot), ...args)));
  const openedAt = Date.now();
  await onEvery(to, 'IMPORTING', fromId);
  await onEvery(from, 'MIGRATING', toId);
  await sleep(options.pauseMs);
  let keysMoved = 0;
  for (const slot of slots) keysMoved += await migrateKeys(slot, from, to, options);
  const migratedAt = Date.now();
  await sleep(options.pauseMs);
  const moving = new Set([from, to].map(addressOf));
  const others = (await cluster.masters()).filter((node) => !moving.has(addressOf(node)));
  // The target first: once the source gives the slots up, clients it redirects must find an owner there.
  await onEvery(to, 'NODE', toId);
  await onEvery(from, 'NODE', toId);
  await Promise.all(others.map((node) => onEvery(node, 'NODE', toId)));
  const closedAt = Date.now();
  await cluster.waitForAgreement();
  return { openedAt, migratedAt, closedAt, keysMoved };
}

/** The master that owns `slot` now, by its own CLUSTER NODES. */
export async function masterOfSlot(cluster: RedisCluster, slot: number): Promise<RedisClusterNode> {
  for (const master of await cluster.masters())
    if ((await cluster.slotsOf(master)).includes(slot)) return master;
  throw new Error(`no master owns slot ${slot}`);
}

/** A slot's keys, `keysPerMigrate` per MIGRATE; asked again until none is left, as redis-cli does. */
async function migrateKeys(
  slot: number,
  from: RedisClusterNode,
  to: RedisClusterNode,
  { keysPerMigrate, pauseMs }: MoveOptions,
): Promise<number> {
  let moved = 0;
  for (;;) {
    const keys = await call(from, 'CLUSTER', 'GETKEYSINSLOT', String(slot), '1000');
    if (!Array.isArray(keys) || keys.length === 0) return moved;
    for (let at = 0; at < keys.length; at += keysPerMigrate) {
      const chunk = keys.slice(at, at + keysPerMigrate).map(String);
      await call(
        from,
        'MIGRATE',
        to.host,
        String(to.port),
        '',
        '0',
        String(MIGRATE_TIMEOUT_MS),
        'KEYS',
        ...chunk,
      );
      moved += chunk.length;
      if (pauseMs > 0) await sleep(pauseMs);
    }
  }
}

/** Redirections and refusals the cluster's nodes sent clients, and the ASKING commands they followed ASK with. */
export interface Redirections {
  moved: number;
  ask: number;
  tryAgain: number;
  asking: number;
}

/** Zeroes every live node's statistics, so that `redirections` counts from now on. */
export async function resetRedirections(cluster: RedisCluster): Promise<void> {
  await Promise.all(cluster.nodes.map((node) => call(node, 'CONFIG', 'RESETSTAT').catch(() => undefined)));
}

/** Summed over every node that answers. */
export async function redirections(cluster: RedisCluster): Promise<Redirections> {
  const total: Redirections = { moved: 0, ask: 0, tryAgain: 0, asking: 0 };
  for (const node of cluster.nodes) {
    let text: string;
    try {
      text = String(await call(node, 'INFO', 'errorstats'));
      text += String(await call(node, 'INFO', 'commandstats'));
    } catch {
      continue;
    }
    total.moved += statCount(text, /errorstat_MOVED:count=(\d+)/);
    total.ask += statCount(text, /errorstat_ASK:count=(\d+)/);
    total.tryAgain += statCount(text, /errorstat_TRYAGAIN:count=(\d+)/);
    total.asking += statCount(text, /cmdstat_asking:calls=(\d+)/);
  }
  return total;
}

const statCount = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
