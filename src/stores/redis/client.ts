// The small client contract the Redis store needs, met by ioredis and node-redis clients, single node or cluster.
import { configError, storeError } from '../../core/errors.js';
import { clusterSlot } from './cluster-slot.js';

export interface ScriptClient {
  readonly isCluster: boolean;
  /** True when a command sent now would be written to a live connection rather than fail or queue. */
  isReady(): boolean;
  evalsha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  eval(script: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** Calls a Redis 7 function; absent when the client library has no FCALL (the script is used instead). */
  readonly fcall?: (name: string, keys: readonly string[], args: readonly string[]) => Promise<unknown>;
  /**
   * Cluster only: calls a function, declaring no keys, on the master that serves `key` as the client knows it now,
   * so that one call may carry keys of several of that node's slots (call-format.ts). No redirection is followed:
   * a key the node does not serve fails alone. Undefined when the client holds no connection to that node.
   */
  readonly fcallOn?: (key: string, name: string, args: readonly string[]) => Promise<unknown> | undefined;
  /**
   * Loads a function library on the server, or on every master of a cluster; one already there counts as loaded
   * (its name is its content's hash). Rejects only when no node took it: a master that is down must not fail the
   * decisions of the others, and its own calls find the library missing again once it is back.
   */
  loadLibrary(code: string): Promise<void>;
  del(key: string): Promise<unknown>;
  /**
   * Names the node that owns `key` now, so a failure on one master is not blamed on the others; '' when that is not
   * known (a single node, or a cluster whose slot map is not known yet: one breaker for all, not one per slot).
   */
  shardOf(key: string): string;
  /** Every key matching `pattern`, across every master of a cluster. */
  scan(pattern: string): AsyncIterable<string>;
  /** Opens the connection if the client has not (an owned client starts closed). */
  connect(): Promise<void>;
  /** Closes the connection within `timeoutMs` (gracefully if it can, then by force); for owned clients only. */
  close(timeoutMs: number): Promise<void>;
}

type Keys = string | string[];

interface IoRedisNode {
  readonly options?: { readonly host?: string | undefined; readonly port?: number | undefined };
  scanStream(options: { match: string; count: number }): AsyncIterable<string[]>;
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** The parts of an ioredis `Redis` or `Cluster` used here. */
export interface IoRedisLike {
  readonly status: string;
  readonly isCluster?: boolean;
  /** Cluster only: per slot, the node keys ("host:port"), master first. */
  readonly slots?: readonly (readonly string[])[];
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  fcall?(name: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  call?(command: string, ...args: string[]): Promise<unknown>;
  del(key: string): Promise<unknown>;
  connect(): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
  once(event: 'ready' | 'end', listener: () => void): unknown;
  off(event: 'ready' | 'end', listener: () => void): unknown;
  scanStream?(options: { match: string; count: number }): AsyncIterable<string[]>;
  nodes?(role: 'master'): IoRedisNode[];
}

interface NodeRedisNode {
  scanIterator(options: { MATCH: string; COUNT: number }): AsyncIterable<Keys>;
  functionLoad(code: string, options: { REPLACE: boolean }): Promise<unknown>;
  fCall(name: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** The parts of a node-redis client (v4 to v6) or cluster used here. */
export interface NodeRedisLike {
  readonly isReady: boolean;
  readonly isOpen: boolean;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  fCall?(name: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  functionLoad?(code: string, options: { REPLACE: boolean }): Promise<unknown>;
  del(key: string): Promise<unknown>;
  connect(): Promise<unknown>;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
  destroy?(): unknown;
  scanIterator?(options: { MATCH: string; COUNT: number }): AsyncIterable<Keys>;
  /** Cluster only. */
  readonly slots?: readonly ({ readonly master: { readonly address: string } & object } | undefined)[];
  readonly masters?: readonly object[];
  nodeClient?(node: object): Promise<NodeRedisNode>;
}

export type RedisClientLike = IoRedisLike | NodeRedisLike;

const SCAN_COUNT = 1000;

export function adaptClient(client: unknown): ScriptClient {
  const candidate = client as Partial<NodeRedisLike & IoRedisLike> | null;
  if (typeof candidate?.evalSha === 'function') return nodeRedis(client as NodeRedisLike);
  if (typeof candidate?.evalsha === 'function') return ioredis(client as IoRedisLike);
  throw configError('client', 'must be an ioredis or node-redis client (or cluster)');
}

function ioredis(client: IoRedisLike): ScriptClient {
  const isCluster = client.isCluster === true;
  const nodes = () => (isCluster ? (client.nodes?.('master') ?? []) : [client as IoRedisNode]);
  const { fcall } = client;
  return {
    isCluster,
    isReady: () => client.status === 'ready',
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (script, keys, args) => client.eval(script, keys.length, ...keys, ...args),
    ...(fcall === undefined
      ? {}
      : { fcall: (name, keys, args) => fcall.call(client, name, keys.length, ...keys, ...args) }),
    ...(fcall === undefined || !isCluster
      ? {}
      : {
          fcallOn: (key, name, args) => {
            const address = client.slots?.[clusterSlot(key)]?.[0];
            const node = nodes().find(({ options }) => `${options?.host}:${options?.port}` === address);
            return node?.call('FCALL', name, '0', ...args);
          },
        }),
    loadLibrary: (code) => loadOnEvery(nodes().map((node) => () => node.call('FUNCTION', 'LOAD', code))),
    del: (key) => client.del(key),
    shardOf: (key) => (isCluster ? (client.slots?.[clusterSlot(key)]?.[0] ?? '') : ''),
    scan: (pattern) => flatten(nodes().map((node) => node.scanStream({ match: pattern, count: SCAN_COUNT }))),
    connect: async () => {
      if (client.status === 'wait') await client.connect();
      // A client created without lazyConnect, or between reconnection attempts, is on its way: wait for it (the
      // store bounds each wait, and shares this one among its waiters).
      else if (['connecting', 'connect', 'reconnecting'].includes(client.status)) await ioredisReady(client);
    },
    close: async (timeoutMs) => {
      // QUIT waits for the server's answer: a hung server would hold it for ever, a down one fails it anyway.
      if (client.status === 'ready' && (await settles(client.quit(), timeoutMs))) return;
      client.disconnect();
    },
  };
}

function nodeRedis(client: NodeRedisLike): ScriptClient {
  const isCluster = client.masters !== undefined;
  const options = (keys: readonly string[], args: readonly string[]) => ({
    keys: keys as string[],
    arguments: args as string[],
  });
  const nodes = (): Promise<NodeRedisNode>[] =>
    isCluster
      ? (client.masters ?? []).map((master) =>
          (client.nodeClient as (node: object) => Promise<NodeRedisNode>)(master),
        )
      : [Promise.resolve(client as NodeRedisNode)];
  const { fCall, functionLoad } = client;
  return {
    isCluster,
    isReady: () => client.isReady,
    evalsha: (sha, keys, args) => client.evalSha(sha, options(keys, args)),
    eval: (script, keys, args) => client.eval(script, options(keys, args)),
    // A client that can call functions but not load them is left to scripts.
    ...(fCall === undefined || functionLoad === undefined
      ? {}
      : { fcall: (name, keys, args) => fCall.call(client, name, options(keys, args)) }),
    ...(fCall === undefined || functionLoad === undefined || !isCluster
      ? {}
      : {
          fcallOn: (key, name, args) => {
            const master = client.slots?.[clusterSlot(key)]?.master;
            const { nodeClient } = client;
            if (master === undefined || nodeClient === undefined) return undefined;
            return nodeClient.call(client, master).then((node) => node.fCall(name, options([], args)));
          },
        }),
    loadLibrary: (code) =>
      loadOnEvery(nodes().map((node) => async () => (await node).functionLoad(code, { REPLACE: false }))),
    del: (key) => client.del(key),
    shardOf: (key) => (isCluster ? (client.slots?.[clusterSlot(key)]?.master.address ?? '') : ''),
    scan: (pattern) =>
      flatten(
        nodes().map(async function* (node) {
          yield* (await node).scanIterator({ MATCH: pattern, COUNT: SCAN_COUNT });
        }),
      ),
    connect: async () => {
      if (!client.isOpen) await client.connect();
    },
    close: async (timeoutMs) => {
      if (!client.isOpen) return;
      if (client.isReady && (await settles(client.close?.() ?? client.quit?.(), timeoutMs))) return;
      client.destroy?.();
    },
  };
}

/** Runs every node's load; resolves once one took it (or had it already), else rejects with the first error. */
async function loadOnEvery(loads: (() => Promise<unknown>)[]): Promise<void> {
  // Not every load is waited for: a master that is down may never answer (node-redis reconnects to it for ever, a
  // hung one never replies), and the others' decisions would wait on it. A call made once this resolves reaches its
  // master on the connection its load was written to first.
  try {
    await Promise.any(
      loads.map((load) =>
        load().catch((error: unknown) => {
          if (/already exists/i.test(String((error as Error)?.message))) return;
          throw error;
        }),
      ),
    );
  } catch (error) {
    throw (error as AggregateError).errors[0] ?? storeError('no Redis node to load the library on');
  }
}

/** True when `promise` resolves within `timeoutMs`; false when it rejects or takes longer. Never rejects. */
export async function settles(promise: Promise<unknown> | undefined, timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      (promise ?? Promise.resolve()).then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function ioredisReady(client: IoRedisLike): Promise<void> {
  return new Promise((resolve, reject) => {
    const ready = () => {
      client.off('end', ended);
      resolve();
    };
    const ended = () => {
      client.off('ready', ready);
      reject(storeError('the ioredis client closed before it was ready'));
    };
    client.once('ready', ready);
    client.once('end', ended);
  });
}

/** One stream of keys from several per-node scans (node-redis v4 yields keys, later versions arrays of keys). */
async function* flatten(sources: AsyncIterable<Keys>[]): AsyncIterable<string> {
  for (const source of sources) {
    for await (const batch of source) {
      if (typeof batch === 'string') yield batch;
      else yield* batch;
    }
  }
}
