// The small client contract the Redis store needs, met by ioredis and node-redis clients (single node or cluster).
import { TollgateError } from '../../errors.js';

export interface ScriptClient {
  readonly library: 'ioredis' | 'node-redis';
  /** True when a command sent now would be written to a live connection rather than fail or queue. */
  isReady(): boolean;
  evalsha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  eval(script: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  del(key: string): Promise<unknown>;
  ping(): Promise<unknown>;
  /** Opens the connection if the client has not (an owned client starts closed). */
  connect(): Promise<void>;
  /** Closes the connection; for owned clients only. */
  close(): Promise<void>;
}

/** The parts of an ioredis `Redis` or `Cluster` used here. */
export interface IoRedisLike {
  readonly status: string;
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  del(key: string): Promise<unknown>;
  ping(): Promise<unknown>;
  connect(): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
}

/** The parts of a node-redis client (v4 to v6) or cluster used here. */
export interface NodeRedisLike {
  readonly isReady: boolean;
  readonly isOpen: boolean;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  del(key: string): Promise<unknown>;
  connect(): Promise<unknown>;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
}

export type RedisClientLike = IoRedisLike | NodeRedisLike;

export function adaptClient(client: unknown): ScriptClient {
  const candidate = client as Partial<NodeRedisLike & IoRedisLike> | null;
  if (typeof candidate?.evalSha === 'function') return nodeRedis(client as NodeRedisLike);
  if (typeof candidate?.evalsha === 'function') return ioredis(client as IoRedisLike);
  throw new TollgateError(
    'ERR_TOLLGATE_CONFIG',
    '`client` must be an ioredis or node-redis client (or cluster)',
    {
      option: 'client',
    },
  );
}

function ioredis(client: IoRedisLike): ScriptClient {
  return {
    library: 'ioredis',
    isReady: () => client.status === 'ready',
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (script, keys, args) => client.eval(script, keys.length, ...keys, ...args),
    del: (key) => client.del(key),
    ping: () => client.ping(),
    connect: async () => {
      if (client.status === 'wait') await client.connect();
    },
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

function nodeRedis(client: NodeRedisLike): ScriptClient {
  return {
    library: 'node-redis',
    isReady: () => client.isReady,
    evalsha: (sha, keys, args) =>
      client.evalSha(sha, { keys: keys as string[], arguments: args as string[] }),
    eval: (script, keys, args) =>
      client.eval(script, { keys: keys as string[], arguments: args as string[] }),
    del: (key) => client.del(key),
    // Cluster clients have no connection-level PING; a script-free read on any key would do, but every
    // supported version has sendCommand on single clients and ping on both.
    ping: () => (client as unknown as { ping(): Promise<unknown> }).ping(),
    connect: async () => {
      if (!client.isOpen) await client.connect();
    },
    close: async () => {
      if (client.isOpen) await (client.close?.() ?? client.quit?.());
    },
  };
}
