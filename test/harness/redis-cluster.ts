// Throwaway real Redis Cluster (masters + replicas) for tests, including node kills and failover.
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  freePorts,
  makeTempDir,
  type RespValue,
  redisCall,
  redisCli,
  redisCliBinary,
  removeTempDir,
  signalChild,
  spawnOnFreePort,
  stopProcess,
  waitForExit,
} from './redis-server.js';

export interface RedisClusterNode {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** undefined for nodes of an external TEST_REDIS_CLUSTER_NODES cluster. */
  readonly pid: number | undefined;
}

export interface RedisCluster {
  /** All nodes, masters and replicas, in start order. */
  readonly nodes: readonly RedisClusterNode[];
  /** Seed nodes for a client (the masters at start-up). */
  readonly rootNodes: readonly { host: string; port: number }[];
  readonly external: boolean;
  /** Current masters according to CLUSTER NODES (changes after a failover); failed masters are left out. */
  masters(): Promise<RedisClusterNode[]>;
  masterForKey(key: string): Promise<RedisClusterNode>;
  /** SIGKILL; resolves after the process has exited. */
  killNode(node: RedisClusterNode): Promise<void>;
  /** Until the dead master owns no slots and every surviving node reports a healthy cluster. */
  waitForFailover(deadMaster: RedisClusterNode, timeoutMs?: number): Promise<void>;
  /** The node's cluster id, by which slot commands and `redis-cli --cluster` name it. */
  nodeId(node: RedisClusterNode): Promise<string>;
  /** The slots `node` owns, ascending. */
  slotsOf(node: RedisClusterNode): Promise<number[]>;
  /** A live replica of `master`. */
  replicaOf(master: RedisClusterNode): Promise<RedisClusterNode>;
  /** Until every live node reports a healthy cluster, knows every node, and sees the same owner for every slot. */
  waitForAgreement(timeoutMs?: number): Promise<void>;
  /**
   * A graceful `CLUSTER FAILOVER` through `replica`: its master stops writes until the replica has caught up, so no
   * acknowledged write is lost. Resolves once every node agrees that the replica owns the slots.
   */
  failover(replica: RedisClusterNode, timeoutMs?: number): Promise<void>;
  /** Starts an empty master and joins it with `redis-cli --cluster add-node`; it owns no slot until a reshard. */
  addNode(): Promise<RedisClusterNode>;
  command(node: RedisClusterNode, ...args: string[]): Promise<string>;
  /** Stops every process and removes the temp dirs; idempotent. */
  stop(): Promise<void>;
}

export interface StartRedisClusterOptions {
  /** At least 3, a redis-cli --cluster create requirement. */
  masters?: number;
  replicasPerMaster?: number;
}

const HOST = '127.0.0.1';
const TOTAL_SLOTS = 16384;
const READY_TIMEOUT_MS = 20_000;
const FAILOVER_TIMEOUT_MS = 20_000;
/** Past Redis's own 5 s limit on a manual failover. */
const MANUAL_FAILOVER_RETRY_MS = 6_000;
const POLL_MS = 50;

const CLUSTER_ARGS = [
  '--cluster-enabled',
  'yes',
  // Failure detection takes node-timeout plus gossip; 1 s keeps a failover to ~2-3 s.
  '--cluster-node-timeout',
  '1000',
  // Our replicas may lag or have been disconnected for a while (e.g. a paused master); never let that
  // make them refuse to take over, or failover tests become flaky.
  '--cluster-replica-validity-factor',
  '0',
  // Redis 7 delays diskless full syncs by 5 s by default, which would dominate cluster start-up.
  '--repl-diskless-sync-delay',
  '0',
  // A master waits up to 10 s for replicas on SIGTERM; pointless for throwaway data.
  '--shutdown-timeout',
  '0',
  // What Tollgate's docs recommend for rate limiting: a downed master must cost only its own slots, not
  // make every node refuse every query until a replica takes over.
  '--cluster-require-full-coverage',
  'no',
];

// ---------------------------------------------------------------------------------------------------------
// CLUSTER NODES parsing

interface ClusterNodesEntry {
  id: string;
  host: string;
  port: number;
  flags: string[];
  /** The id of the master a replica follows; '-' for a master. */
  master: string;
  slots: [number, number][];
  /** `[slot->-id]` and `[slot-<-id]` markers: slots this node is migrating or importing. */
  openSlots: string[];
}

function parseClusterNodes(text: string): ClusterNodesEntry[] {
  const entries: ClusterNodesEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    const [id, address, flagList, master = '-'] = fields;
    if (id === undefined || address === undefined || flagList === undefined || id === '') continue;
    // ip:port@cport[,hostname]; the ip may be IPv6, so split at the last colon.
    const hostPort = address.split('@')[0] ?? '';
    const colon = hostPort.lastIndexOf(':');
    const slots: [number, number][] = [];
    const openSlots: string[] = [];
    for (const slot of fields.slice(8)) {
      if (slot.startsWith('[')) {
        openSlots.push(slot); // importing/migrating markers, not ownership
        continue;
      }
      const [from, to] = slot.split('-');
      if (from === undefined) continue;
      slots.push([Number(from), Number(to ?? from)]);
    }
    entries.push({
      id,
      host: hostPort.slice(0, colon),
      port: Number(hostPort.slice(colon + 1)),
      flags: flagList.split(','),
      master,
      slots,
      openSlots,
    });
  }
  return entries;
}

function isServingMaster(entry: ClusterNodesEntry): boolean {
  return (
    entry.flags.includes('master') && !entry.flags.includes('fail') && !entry.flags.includes('handshake')
  );
}

function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

function asText(value: RespValue): string {
  if (typeof value === 'string') return value;
  throw new Error(`expected a string reply, got ${JSON.stringify(value)}`);
}

function makeNode(host: string, port: number, pid: number | undefined): RedisClusterNode {
  return { host, port, url: `redis://${host}:${port}`, pid };
}

// ---------------------------------------------------------------------------------------------------------
// Implementation shared by owned and external clusters

class ClusterBase {
  /** Grows when a node is added. */
  protected readonly nodeList: RedisClusterNode[];

  constructor(nodes: readonly RedisClusterNode[]) {
    this.nodeList = [...nodes];
  }

  get nodes(): readonly RedisClusterNode[] {
    return this.nodeList;
  }

  /** How many nodes every node must know; undefined when that is not known (an external cluster). */
  protected expectedNodeCount(): number | undefined {
    return undefined;
  }

  /** Nodes worth asking; owned clusters override this to skip nodes they killed. */
  protected reachableNodes(): readonly RedisClusterNode[] {
    return this.nodes;
  }

  protected async ask(args: readonly string[]): Promise<RespValue> {
    const errors: string[] = [];
    for (const node of this.reachableNodes()) {
      try {
        return await redisCall(node.host, node.port, args);
      } catch (error) {
        errors.push(`${node.host}:${node.port}: ${(error as Error).message}`);
      }
    }
    throw new Error(`no cluster node answered ${args.join(' ')}:\n${errors.join('\n')}`);
  }

  protected nodeFor(entry: { host: string; port: number }): RedisClusterNode {
    return (
      this.nodes.find((node) => node.port === entry.port && node.host === entry.host) ??
      makeNode(entry.host, entry.port, undefined)
    );
  }

  async masters(): Promise<RedisClusterNode[]> {
    const entries = parseClusterNodes(asText(await this.ask(['CLUSTER', 'NODES'])));
    // A master that owns no slot serves no key (a replica still flagged master in a stale gossip view).
    return entries
      .filter((entry) => isServingMaster(entry) && entry.slots.length > 0)
      .map((entry) => this.nodeFor(entry));
  }

  async masterForKey(key: string): Promise<RedisClusterNode> {
    const slot = await this.ask(['CLUSTER', 'KEYSLOT', key]);
    if (typeof slot !== 'number') throw new Error(`CLUSTER KEYSLOT returned ${JSON.stringify(slot)}`);
    const entries = parseClusterNodes(asText(await this.ask(['CLUSTER', 'NODES'])));
    const owner = entries.find(
      (entry) => isServingMaster(entry) && entry.slots.some(([from, to]) => slot >= from && slot <= to),
    );
    if (owner === undefined)
      throw new Error(`no live master serves slot ${slot} (key ${JSON.stringify(key)})`);
    return this.nodeFor(owner);
  }

  command(node: RedisClusterNode, ...args: string[]): Promise<string> {
    return redisCli(['-h', node.host, '-p', String(node.port)], args);
  }

  async nodeId(node: RedisClusterNode): Promise<string> {
    return asText(await redisCall(node.host, node.port, ['CLUSTER', 'MYID']));
  }

  async slotsOf(node: RedisClusterNode): Promise<number[]> {
    const entries = parseClusterNodes(asText(await this.ask(['CLUSTER', 'NODES'])));
    const entry = entries.find(({ host, port }) => host === node.host && port === node.port);
    return (entry?.slots ?? []).flatMap(([from, to]) =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i),
    );
  }

  async replicaOf(master: RedisClusterNode): Promise<RedisClusterNode> {
    const id = await this.nodeId(master);
    const entries = parseClusterNodes(asText(await this.ask(['CLUSTER', 'NODES'])));
    const replica = entries.find(
      (entry) => entry.master === id && entry.flags.includes('slave') && !entry.flags.includes('fail'),
    );
    if (replica === undefined) throw new Error(`${master.host}:${master.port} has no live replica`);
    return this.nodeFor(replica);
  }

  async waitForAgreement(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let problem = await this.#agreementProblem();
    while (problem !== undefined) {
      if (Date.now() > deadline)
        throw new Error(`cluster nodes did not agree within ${timeoutMs} ms: ${problem}`);
      await sleep(POLL_MS);
      problem = await this.#agreementProblem();
    }
  }

  // Describes what the nodes still disagree on (for the timeout message), or undefined once they agree. Gossip
  // spreads a new slot owner or a new node over a few hundred ms; a client that asks a node still behind is sent
  // back and forth, which the tests must not mistake for the store's doing.
  async #agreementProblem(): Promise<string | undefined> {
    let agreed: string | undefined;
    for (const node of this.reachableNodes()) {
      try {
        const info = parseInfo(asText(await redisCall(node.host, node.port, ['CLUSTER', 'INFO'])));
        if (info.get('cluster_state') !== 'ok' || info.get('cluster_slots_ok') !== String(TOTAL_SLOTS))
          return `${node.port}: cluster_state:${info.get('cluster_state')}, slots_ok:${info.get('cluster_slots_ok')}`;
        const view = parseClusterNodes(asText(await redisCall(node.host, node.port, ['CLUSTER', 'NODES'])));
        const expected = this.expectedNodeCount();
        if (expected !== undefined && view.length !== expected)
          return `${node.port} knows ${view.length} nodes of ${expected}`;
        const unsettled = view.find(
          (entry) => entry.host === '' || entry.flags.includes('handshake') || entry.openSlots.length > 0,
        );
        if (unsettled !== undefined)
          return `${node.port} sees ${unsettled.port} as ${unsettled.flags} ${unsettled.openSlots}`;
        const owners = view
          .map(({ id, slots }) => `${id}:${slots.map(([from, to]) => `${from}-${to}`).join(',')}`)
          .sort()
          .join(' ');
        agreed ??= owners;
        if (owners !== agreed)
          return `${node.port} sees other slot owners than ${this.reachableNodes()[0]?.port}`;
      } catch (error) {
        return `${node.port}: ${(error as Error).message}`;
      }
    }
    return undefined;
  }
}

interface OwnedNode {
  node: RedisClusterNode;
  child: ChildProcess;
  dir: string;
}

class OwnedRedisCluster extends ClusterBase implements RedisCluster {
  readonly external = false;
  rootNodes: readonly { host: string; port: number }[] = [];
  readonly #owned: OwnedNode[];
  #stopping: Promise<void> | undefined;

  constructor(owned: readonly OwnedNode[]) {
    super(owned.map((entry) => entry.node));
    this.#owned = [...owned];
  }

  protected override expectedNodeCount(): number {
    return this.#owned.length;
  }

  protected override reachableNodes(): readonly RedisClusterNode[] {
    return this.#owned.filter((entry) => isRunning(entry.child)).map((entry) => entry.node);
  }

  #ownedFor(node: RedisClusterNode): OwnedNode {
    const entry = this.#owned.find((owned) => owned.node.port === node.port && owned.node.host === node.host);
    if (entry === undefined) throw new Error(`${node.host}:${node.port} is not a node of this cluster`);
    return entry;
  }

  async killNode(node: RedisClusterNode): Promise<void> {
    if (this.#stopping !== undefined) throw new Error('cannot killNode(): the cluster was stopped');
    const { child } = this.#ownedFor(node);
    signalChild(child, 'SIGKILL');
    if (!(await waitForExit(child))) throw new Error(`cluster node ${node.port} did not exit after SIGKILL`);
  }

  async waitForFailover(deadMaster: RedisClusterNode, timeoutMs = FAILOVER_TIMEOUT_MS): Promise<void> {
    const dead = this.#ownedFor(deadMaster);
    if (isRunning(dead.child)) {
      throw new Error(`waitForFailover(): ${deadMaster.port} is still running; killNode() it first`);
    }
    const deadline = Date.now() + timeoutMs;
    let lastProblem = 'not checked yet';
    while (Date.now() < deadline) {
      lastProblem = (await this.#failoverProblem(deadMaster)) ?? '';
      if (lastProblem === '') return;
      await sleep(POLL_MS);
    }
    throw new Error(
      `no failover for dead master ${deadMaster.host}:${deadMaster.port} within ${timeoutMs} ms: ${lastProblem}`,
    );
  }

  // Describes what is still wrong (for the timeout message), or undefined when failover is complete.
  async #failoverProblem(deadMaster: RedisClusterNode): Promise<string | undefined> {
    const survivors = this.reachableNodes();
    if (survivors.length === 0) return 'no surviving nodes';
    for (const node of survivors) {
      try {
        const info = parseInfo(asText(await redisCall(node.host, node.port, ['CLUSTER', 'INFO'])));
        if (info.get('cluster_state') !== 'ok')
          return `${node.port}: cluster_state:${info.get('cluster_state')}`;
        if (info.get('cluster_slots_ok') !== String(TOTAL_SLOTS)) {
          return `${node.port}: cluster_slots_ok:${info.get('cluster_slots_ok')}`;
        }
        // Right after the kill the dead master is not even suspected yet and everything still looks fine.
        const entries = parseClusterNodes(
          asText(await redisCall(node.host, node.port, ['CLUSTER', 'NODES'])),
        );
        const deadEntry = entries.find(
          (entry) => entry.port === deadMaster.port && entry.host === deadMaster.host,
        );
        if (deadEntry !== undefined && deadEntry.slots.length > 0) {
          return `${node.port} still sees ${deadMaster.port} (${deadEntry.flags.join(',')}) owning slots`;
        }
      } catch (error) {
        return `${node.port}: ${(error as Error).message}`;
      }
    }
    return undefined;
  }

  async failover(replica: RedisClusterNode, timeoutMs = FAILOVER_TIMEOUT_MS): Promise<void> {
    if (this.#stopping !== undefined) throw new Error('cannot failover(): the cluster was stopped');
    const deadline = Date.now() + timeoutMs;
    let askedAt = Number.NEGATIVE_INFINITY;
    for (;;) {
      // Redis gives a manual failover 5 s to complete and then drops it silently: a loaded box asks again.
      if (Date.now() - askedAt > MANUAL_FAILOVER_RETRY_MS) {
        await redisCall(replica.host, replica.port, ['CLUSTER', 'FAILOVER']);
        askedAt = Date.now();
      }
      const info = parseInfo(asText(await redisCall(replica.host, replica.port, ['INFO', 'replication'])));
      if (info.get('role') === 'master') break;
      if (Date.now() > deadline)
        throw new Error(`${replica.port} still ${info.get('role')} ${timeoutMs} ms after CLUSTER FAILOVER`);
      await sleep(POLL_MS);
    }
    await this.waitForAgreement(Math.max(deadline - Date.now(), POLL_MS));
  }

  async addNode(): Promise<RedisClusterNode> {
    if (this.#stopping !== undefined) throw new Error('cannot addNode(): the cluster was stopped');
    const [existing] = this.reachableNodes();
    if (existing === undefined) throw new Error('cannot addNode(): no node of the cluster is running');
    const [port, busPort] = await freePorts(2);
    const added = await startNode(port ?? 0, busPort ?? 0);
    // Owned before it joins, so that stop() ends it whatever happens next.
    this.#owned.push(added);
    this.nodeList.push(added.node);
    // redis-cli also copies the function libraries to the new node.
    await redisCli(
      [],
      ['--cluster', 'add-node', `${added.node.host}:${added.node.port}`, `${existing.host}:${existing.port}`],
    );
    await this.waitForAgreement();
    return added.node;
  }

  stop(): Promise<void> {
    this.#stopping ??= stopNodes(this.#owned);
    return this.#stopping;
  }
}

class ExternalRedisCluster extends ClusterBase implements RedisCluster {
  readonly external = true;
  readonly rootNodes: readonly { host: string; port: number }[];

  constructor(nodes: readonly RedisClusterNode[]) {
    super(nodes);
    // Which of the given nodes are masters is unknown up front; any node works as a client seed.
    this.rootNodes = nodes.map(({ host, port }) => ({ host, port }));
  }

  #refuse(action: string): Error {
    return new Error(
      `${action} needs a cluster owned by the test, but TEST_REDIS_CLUSTER_NODES points at an external cluster; unset it to run failover and resharding tests`,
    );
  }

  killNode(): Promise<void> {
    return Promise.reject(this.#refuse('killNode()'));
  }

  waitForFailover(): Promise<void> {
    return Promise.reject(this.#refuse('waitForFailover()'));
  }

  failover(): Promise<void> {
    return Promise.reject(this.#refuse('failover()'));
  }

  addNode(): Promise<RedisClusterNode> {
    return Promise.reject(this.#refuse('addNode()'));
  }

  async stop(): Promise<void> {
    // Not ours to stop.
  }
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

async function stopNodes(owned: readonly OwnedNode[]): Promise<void> {
  const results = await Promise.allSettled(
    owned.map(async ({ child, dir }) => {
      try {
        await stopProcess(child);
      } finally {
        await removeTempDir(dir);
      }
    }),
  );
  const failure = results.find((result) => result.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}

function parseExternalNodes(spec: string): RedisClusterNode[] {
  return spec
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const colon = part.lastIndexOf(':');
      const port = Number(part.slice(colon + 1));
      if (colon <= 0 || !Number.isInteger(port) || port <= 0) {
        throw new Error(`TEST_REDIS_CLUSTER_NODES entry ${JSON.stringify(part)} is not host:port`);
      }
      return makeNode(part.slice(0, colon).replace(/^\[|\]$/g, ''), port, undefined);
    });
}

// ---------------------------------------------------------------------------------------------------------
// Start-up

async function startNode(port: number, busPort: number): Promise<OwnedNode> {
  const dir = await makeTempDir('cluster');
  try {
    const { child, port: boundPort } = await spawnOnFreePort(
      dir,
      (p, [bus]) => [
        ...CLUSTER_ARGS,
        '--cluster-config-file',
        `nodes-${p}.conf`,
        // An explicit bus port: the default port+10000 overflows for ports above 55535.
        '--cluster-port',
        String(bus),
      ],
      1,
      [port, busPort],
    );
    return { node: makeNode(HOST, boundPort, child.pid), child, dir };
  } catch (error) {
    await removeTempDir(dir);
    throw error;
  }
}

async function clusterProblem(owned: readonly OwnedNode[], masterCount: number): Promise<string | undefined> {
  let masters = 0;
  for (const { node } of owned) {
    try {
      const info = parseInfo(asText(await redisCall(node.host, node.port, ['CLUSTER', 'INFO'])));
      if (info.get('cluster_state') !== 'ok')
        return `${node.port}: cluster_state:${info.get('cluster_state')}`;
      if (info.get('cluster_slots_ok') !== String(TOTAL_SLOTS)) {
        return `${node.port}: cluster_slots_ok:${info.get('cluster_slots_ok')}`;
      }
      if (info.get('cluster_known_nodes') !== String(owned.length)) {
        return `${node.port}: cluster_known_nodes:${info.get('cluster_known_nodes')} of ${owned.length}`;
      }
      // Each node's own view of who serves slots must be complete too, not only the nodes' roles: right after
      // `--cluster create`, one node's gossip can still list a new replica as a master (seen once in CI).
      const view = parseClusterNodes(asText(await redisCall(node.host, node.port, ['CLUSTER', 'NODES'])));
      const serving = view.filter((entry) => isServingMaster(entry) && entry.slots.length > 0).length;
      const flaggedMasters = view.filter((entry) => entry.flags.includes('master')).length;
      if (serving !== masterCount || flaggedMasters !== masterCount) {
        return `${node.port} sees ${flaggedMasters} masters, ${serving} serving slots, of ${masterCount}`;
      }
      // A node lists itself as ":port" until it learns its own address; tests key nodes by "host:port".
      if (view.some((entry) => entry.host === ''))
        return `${node.port} does not know every node's address yet`;
      const replication = parseInfo(asText(await redisCall(node.host, node.port, ['INFO', 'replication'])));
      if (replication.get('role') === 'master') masters++;
      else if (replication.get('master_link_status') !== 'up') {
        return `${node.port}: replica master_link_status:${replication.get('master_link_status')}`;
      }
    } catch (error) {
      return `${node.port}: ${(error as Error).message}`;
    }
  }
  return masters === masterCount ? undefined : `${masters} masters instead of ${masterCount}`;
}

/**
 * A test's `skip` when it must kill, move or add nodes of a cluster it starts itself (`what` it does): the reason
 * while TEST_REDIS_CLUSTER_NODES names an external cluster, else false.
 */
export function needsOwnCluster(what: string): string | false {
  if ((process.env.TEST_REDIS_CLUSTER_NODES ?? '') === '') return false;
  return `${what}: needs a cluster the test starts itself (unset TEST_REDIS_CLUSTER_NODES)`;
}

/** A node as "host:port", the way clients and CLUSTER NODES name it. */
export function addressOf({ host, port }: { readonly host: string; readonly port: number }): string {
  return `${host}:${port}`;
}

export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisCluster> {
  const externalNodes = process.env.TEST_REDIS_CLUSTER_NODES;
  if (externalNodes !== undefined && externalNodes !== '') {
    const nodes = parseExternalNodes(externalNodes);
    if (nodes.length === 0) throw new Error('TEST_REDIS_CLUSTER_NODES is set but lists no host:port');
    return new ExternalRedisCluster(nodes);
  }
  return startOwnedRedisCluster(options);
}

/**
 * A cluster of this process's own, whatever TEST_REDIS_CLUSTER_NODES says: for the bench, which resets the stats of
 * the nodes it measures and must never do that to a cluster someone else is using.
 */
export async function startOwnedRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisCluster> {
  const masterCount = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  if (!Number.isInteger(masterCount) || masterCount < 3) {
    throw new Error(`a Redis Cluster needs at least 3 masters (got ${masterCount})`);
  }
  if (!Number.isInteger(replicas) || replicas < 0) throw new Error(`invalid replicasPerMaster ${replicas}`);
  if (redisCliBinary() === undefined) throw new Error('redis-cli binary not found on PATH');

  const total = masterCount * (1 + replicas);
  // One allocation for every client and bus port so that concurrently started nodes never pick the same port.
  const ports = await freePorts(total * 2);
  const started = await Promise.allSettled(
    Array.from({ length: total }, (_, i) => startNode(ports[2 * i] ?? 0, ports[2 * i + 1] ?? 0)),
  );
  const owned = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const cluster = new OwnedRedisCluster(owned);
  try {
    const failed = started.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;

    await redisCli(
      [],
      [
        '--cluster',
        'create',
        ...owned.map(({ node }) => `${node.host}:${node.port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
    );

    const deadline = Date.now() + READY_TIMEOUT_MS;
    let problem = await clusterProblem(owned, masterCount);
    while (problem !== undefined) {
      if (Date.now() > deadline) {
        throw new Error(`Redis Cluster not ready within ${READY_TIMEOUT_MS} ms: ${problem}`);
      }
      await sleep(POLL_MS);
      problem = await clusterProblem(owned, masterCount);
    }
    // Asked rather than assumed: redis-cli chooses which addresses become masters.
    cluster.rootNodes = (await cluster.masters()).map(({ host, port }) => ({ host, port }));
    return cluster;
  } catch (error) {
    await cluster.stop().catch(() => undefined);
    throw error;
  }
}
