// The store's connection: its own ioredis client unless given one, opened once for all waiters, closed in a budget.
import { configError, environmentError, storeError, timeoutError } from '../../core/errors.js';
import { adaptClient, type ScriptClient, settles } from './client.js';
import { type Address, type ConnectionOptions, nodeAddress, parseUrl } from './connection-options.js';
import type { RedisStoreSettings } from './redis-store-options.js';
import { budget, withTimeout } from './time-budget.js';

type ConnectionSettings = Pick<RedisStoreSettings, 'client' | 'connectTimeoutMs' | 'reconnectCooldownMs'>;

export class Connection {
  #client: ScriptClient | undefined;
  /** Whether the store opened the client, and so closes it: an application's client stays open. */
  #owned = false;
  /** The connection being opened, shared by everyone who waits for it (each within a budget of their own). */
  #connecting: Promise<ScriptClient> | undefined;
  /** Set once the client has been ready: from then on, decisions never wait for a reconnection. */
  #connected = false;
  #closed = false;
  readonly #options: ConnectionOptions;
  readonly #connectTimeoutMs: number;
  readonly #cooldownMs: number;
  readonly #metrics: { timeouts: number };

  constructor(options: ConnectionOptions, settings: ConnectionSettings, metrics: { timeouts: number }) {
    this.#options = options;
    this.#client = settings.client;
    this.#connectTimeoutMs = settings.connectTimeoutMs;
    this.#cooldownMs = settings.reconnectCooldownMs;
    this.#metrics = metrics;
  }

  /**
   * The node that owns `key`, as the client knows it now: '' when it does not, and until the client has first been
   * ready. A client still connecting may know the slots, but a decision that times out waiting for it is no failure
   * of the node that owns them: it is one of the '' breaker, which stands for the whole cluster until then.
   */
  shardOf(key: string): string {
    const client = this.#client;
    if (client === undefined || !(this.#connected || client.isReady())) return '';
    return client.shardOf(key);
  }

  /**
   * The client once ready, waiting at most `budgetMs`. One opening is shared by every waiter and goes on past
   * a waiter's budget (the client keeps retrying on its own), so waits that time out leave nothing behind.
   */
  ready(budgetMs = this.#connectTimeoutMs): Promise<ScriptClient> {
    if (this.#closed) return Promise.reject(storeError('the RedisStore is closed'));
    const client = this.#client;
    if (client?.isReady()) {
      this.#connected = true;
      return Promise.resolve(client);
    }
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return withTimeout(this.#connecting, budgetMs, this.#metrics);
  }

  /**
   * The client for a script call of decisions. Only decisions made before the first connection wait for it (within
   * their `commandTimeoutMs`, which the caller bounds); later ones never wait for a reconnection, whoever started
   * it.
   */
  async #forDecisions(): Promise<ScriptClient> {
    const client = this.#connected ? this.#client : await this.ready();
    if (!client?.isReady()) throw storeError('Redis is not connected');
    return client;
  }

  /**
   * `send` on the client once the store's first connection is made, the wait and the call bounded together by
   * `bound` (the call's `commandTimeoutMs`), so a Redis unreachable at start costs each decision that budget, not
   * `connectTimeoutMs` (the opening goes on in the background). A call whose budget ran out while it waited is
   * never sent: its answer was given already.
   */
  async whenConnected(
    send: (client: ScriptClient) => Promise<unknown>,
    bound: (sent: Promise<unknown>) => Promise<unknown>,
  ): Promise<unknown> {
    let late = false;
    const sent = this.#forDecisions().then((client) => {
      if (late) throw timeoutError('the decision was answered before Redis was');
      return send(client);
    });
    try {
      return await bound(sent);
    } catch (error) {
      late = true;
      throw error;
    }
  }

  /** The client when it is connected and ready now, else undefined: a decision's client without a turn of the queue. */
  readyNow(): ScriptClient | undefined {
    const client = this.#client;
    return this.#connected && client?.isReady() ? client : undefined;
  }

  /**
   * Closes the store's own connection: QUIT within `budgetMs`, then by force, so a hung Redis cannot hold a
   * shutdown. A connection still being opened is closed as soon as it exists; an application's client stays open.
   */
  async close(budgetMs: number): Promise<void> {
    this.#closed = true;
    const within = budget(budgetMs);
    const client = this.#client;
    if (client !== undefined && this.#owned) await client.close(within());
    // An opening under way sees the store closed and drops what it opened (see #open); an app-owned client's
    // own connecting is not ours to wait for past the budget.
    await settles(this.#connecting, within());
  }

  async #open(): Promise<ScriptClient> {
    if (this.#client === undefined) {
      const client = await openOwnedClient(this.#options, {
        connectTimeoutMs: this.#connectTimeoutMs,
        cooldownMs: this.#cooldownMs,
      });
      // A close() during the import: the connection must never open.
      if (this.#closed) throw storeError('the RedisStore is closed');
      this.#client = client;
      this.#owned = true;
    }
    await this.#client.connect();
    // A client between attempts (reconnecting) has nothing to wait for yet, but it is not connected either.
    if (!this.#client.isReady()) throw storeError('Redis is not connected');
    this.#connected = true;
    return this.#client;
  }
}

/**
 * The store's own ioredis connection (see docs/architecture.md for the measurement behind the choice): on a single
 * server no offline queue (commands fail at once while disconnected), one reconnection attempt per cooldown, and a
 * database index the server is known to have; a cluster's, see below.
 */
async function openOwnedClient(
  options: ConnectionOptions,
  { connectTimeoutMs, cooldownMs }: { readonly connectTimeoutMs: number; readonly cooldownMs: number },
): Promise<ScriptClient> {
  const { Redis, Cluster } = await import('ioredis').catch((cause: unknown) => {
    throw environmentError(
      'RedisStore needs the `ioredis` package (npm install ioredis), or pass `client`',
      cause,
    );
  });
  // Credentials a URL carries win over the `username` and `password` options, as for ioredis itself.
  const connection = (address?: Address) => ({
    ...(address?.tls ? { tls: {} } : {}),
    ...options.socket,
    ...defined('username', address?.username ?? options.username),
    ...defined('password', address?.password ?? options.password),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: connectTimeoutMs,
  });
  if (options.rootNodes !== undefined) {
    const nodes = options.rootNodes.map(nodeAddress);
    const client = new Cluster(
      nodes.map(({ host, port }) => ({ host, port })),
      {
        lazyConnect: true,
        // A master's connection opens on its first command. Without this queue, ioredis bounces a command that finds
        // it still opening through its failover retry (a delay and a slot refresh, then a random master, maybe
        // the dead one), so a fresh store's first decisions on live masters outran `commandTimeoutMs`
        // and opened their breakers. Queued, each waits for its own master, within its budget. The store still
        // sends a call only to a cluster that is ready (it checks before each one).
        enableOfflineQueue: true,
        clusterRetryStrategy: () => cooldownMs,
        // ioredis's ready check asks a random master for CLUSTER INFO once it has the slot map. A dead master
        // fails it, and ioredis then drops the whole connection, reconnects only after `clusterRetryStrategy`
        // and never settles connect(): a fresh store with one master down could decide nothing for seconds
        // (docs/cluster.md). The check only looks for `cluster_state:fail`, which the decisions on the failing slots
        // report by themselves (CLUSTERDOWN), to their own node's breaker.
        enableReadyCheck: false,
        // The slot map is asked of one node at a time, in random order, each given this long: a root node that
        // hangs (a stopped process, a host gone without a reset) must leave time for the others within one
        // connect timeout, or a fresh store could start unable to decide anything.
        slotsRefreshTimeout: Math.max(1, Math.floor(connectTimeoutMs / nodes.length)),
        // Credentials and TLS from the node URLs (checked to agree), else from the options.
        redisOptions: connection(nodes.find((node) => node.password !== undefined || node.tls)),
      },
    );
    // Errors surface through the decisions that hit them; an unhandled 'error' event would end the process.
    client.on('error', () => {});
    return adaptClient(client);
  }
  const address: Address =
    options.url === undefined
      ? { host: options.host ?? '127.0.0.1', port: options.port ?? 6379, tls: false }
      : parseUrl('url', options.url);
  const db = options.db ?? address.db;
  const client = new Redis({
    ...connection(address),
    host: address.host,
    port: address.port,
    ...(db === undefined ? {} : { db }),
    lazyConnect: true,
    retryStrategy: () => cooldownMs,
  });
  client.on('error', () => {});
  const adapted = adaptClient(client);
  if (db === undefined || db === 0) return adapted;
  // ioredis selects the database when it connects, but an index the server lacks only emits an error and leaves the
  // connection on database 0: limits would be kept where nobody looks. So it is checked once, and never trusted
  // before that.
  let checked = false;
  return {
    ...adapted,
    isReady: () => checked && adapted.isReady(),
    connect: async () => {
      await adapted.connect();
      if (checked) return;
      try {
        await client.select(db);
      } catch (error) {
        if (!/DB index/i.test((error as Error).message)) throw error;
        client.disconnect();
        throw configError('db', `is not a database of this Redis server (${(error as Error).message})`, db);
      }
      checked = true;
    },
  };
}

function defined<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
