// RedisStore: every decision is one atomic script call on the Redis server's clock, shared by a whole fleet.
import { configError, TollgateError } from '../../errors.js';
import { bucketKey, memberOf } from '../../key.js';
import type { Logger } from '../../logger.js';
import type { AnyPolicy, PolicyResult } from '../../policies/policy.js';
import {
  knownKeys,
  loggerOption,
  nonNegativeInteger,
  oneOf,
  optionalClock,
  positiveInteger,
  timerMs,
} from '../../validate.js';
import { MemoryStore } from '../memory-store.js';
import { checkRetentionCap } from '../retention.js';
import { degradedResponse, type Store, type StoreRequest, type StoreResponse } from '../store.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { adaptClient, type RedisClientLike, type ScriptClient, settles } from './client.js';
import { clusterSlot, keyBeside } from './cluster-slot.js';
import {
  CONNECTION_OPTIONS,
  type ConnectionOptions,
  checkConnectionOptions,
  openOwnedClient,
  type RootNode,
} from './connection.js';
import { DenyCache } from './deny-cache.js';
import { constantArguments, SCRIPT, SCRIPT_SHA } from './script.js';

export interface RedisStoreOptions extends ConnectionOptions {
  /** A client the application already owns (ioredis or node-redis); the store never closes it. */
  readonly client?: RedisClientLike;
  /** Key namespace. Default 'ratelimit:'. */
  readonly keyPrefix?: string;
  /** Least TTL of a key. Default 60. */
  readonly minTtlSeconds?: number;
  /**
   * Greatest TTL of a key, for a data-retention rule. Default: none, each key lives until its state is at rest (and
   * a bucket that never refills has no TTL). A limiter whose policies need longer is refused at wire-up.
   */
  readonly maxTtlSeconds?: number;
  /** Added to each key's own time to rest. Default 60. */
  readonly ttlPaddingSeconds?: number;
  /** Allow (true) or reject (false) requests while Redis is unusable. Default true. */
  readonly failOpen?: boolean;
  /** Budget for one decision. Default 250 ms. */
  readonly commandTimeoutMs?: number;
  /** Budget for connecting. Default 1000 ms. */
  readonly connectTimeoutMs?: number;
  /** Least time between two connection attempts. Default 1000 ms. */
  readonly reconnectCooldownMs?: number;
  /** `Retry-After` given when failing closed. Default 1000 ms. */
  readonly degradedRetryAfterMs?: number;
  /** Consecutive failures after which Redis is no longer waited on, only probed. Default 3. */
  readonly breakerThreshold?: number;
  /**
   * What answers while Redis is down: `'none'` (default) is the fail mode; `'memory'` enforces the limit per
   * process, scaled by `fallbackShare`.
   */
  readonly fallback?: 'none' | 'memory';
  /** Share of each limit one process enforces in fallback; 1/N for N instances keeps the fleet near its limit. Default 1. */
  readonly fallbackShare?: number;
  /**
   * Most denials remembered locally, so a client flooding past its limit costs no round trip until its retry
   * time; 0 disables. Default 10,000.
   */
  readonly localDenyCache?: number;
  /** At most one error log line per this window. Default 5000 ms. */
  readonly logIntervalMs?: number;
  readonly logger?: Logger;
  /** Epoch ms to use instead of the server's TIME; for tests only. */
  readonly clock?: () => number;
}

export type { RootNode };

export interface RedisStoreMetrics {
  decisions: number;
  degradedAllowed: number;
  degradedDenied: number;
  errors: number;
  timeouts: number;
  /** Times the script was missing on a server (restart, failover, SCRIPT FLUSH) and was sent in full. */
  scriptReloads: number;
  /** Decisions made by the memory fallback (also counted in degradedAllowed / degradedDenied). */
  fallbackDecisions: number;
  /** Times the circuit breaker opened. */
  breakerTrips: number;
  /** Denials answered from the local deny cache, without Redis. */
  localDenials: number;
}

export interface RedisHealth {
  readonly ok: boolean;
  readonly latencyMs?: number;
  readonly error?: string;
  readonly failOpen: boolean;
}

/**
 * Most decisions in one script call. It bounds how long one call holds the server (~0.4 ms), and full batches
 * sent at once keep the server busy while the previous batch's answers travel back: in bench/, at 64 in flight,
 * batches of 24 to 48 gave 54k-59k token-bucket decisions/s and unbounded ones 36k (one call per decision: 29k).
 */
const MAX_BATCH = 32;

const OPTIONS = [
  'client',
  ...CONNECTION_OPTIONS,
  'keyPrefix',
  'minTtlSeconds',
  'maxTtlSeconds',
  'ttlPaddingSeconds',
  'failOpen',
  'commandTimeoutMs',
  'connectTimeoutMs',
  'reconnectCooldownMs',
  'degradedRetryAfterMs',
  'logIntervalMs',
  'breakerThreshold',
  'localDenyCache',
  'fallback',
  'fallbackShare',
  'logger',
  'clock',
];

export class RedisStore implements Store {
  readonly metrics: RedisStoreMetrics = {
    decisions: 0,
    degradedAllowed: 0,
    degradedDenied: 0,
    errors: 0,
    timeouts: 0,
    scriptReloads: 0,
    fallbackDecisions: 0,
    breakerTrips: 0,
    localDenials: 0,
  };
  readonly failOpen: boolean;
  readonly keyPrefix: string;
  readonly #options: RedisStoreOptions;
  readonly #ttlMs: readonly number[];
  readonly #maxTtlSeconds: number | undefined;
  readonly #commandTimeoutMs: number;
  readonly #connectTimeoutMs: number;
  readonly #degradedRetryAfterMs: number;
  readonly #logIntervalMs: number;
  readonly #logger: Logger;
  readonly #clock: (() => number) | undefined;
  /** One breaker per node (a cluster's masters fail alone), created on first failure. */
  readonly #breakers = new Map<string, CircuitBreaker>();
  readonly #breakerThreshold: number;
  readonly #probeIntervalMs: number;
  readonly #fallback: MemoryStore | undefined;
  readonly #fallbackShare: number;
  readonly #scaled = new WeakMap<readonly AnyPolicy[], readonly AnyPolicy[]>();
  /** Per limiter (its policies array is its own): ARGV up to the costs, for consume and for peek. */
  readonly #constantArgs = new WeakMap<
    readonly AnyPolicy[],
    readonly [readonly string[], readonly string[]]
  >();
  /** Decisions asked for during this turn of the event loop, by limiter and then by batch; sent when it ends. */
  #pending = new Map<readonly AnyPolicy[], Map<string, Batch>>();
  #flushScheduled = false;
  readonly #denials: DenyCache | undefined;
  #client: ScriptClient | undefined;
  #owned = false;
  /** The connection being opened, shared by everyone who waits for it (each within a budget of their own). */
  #connecting: Promise<ScriptClient> | undefined;
  /** Set once the client has been ready: from then on, decisions never wait for a reconnection. */
  #connected = false;
  #lastLogAt = Number.NEGATIVE_INFINITY;
  #suppressed = 0;
  /** Why the last failed call to each node failed, for health(). */
  readonly #lastErrors = new Map<string, string>();
  #closed = false;

  constructor(options: RedisStoreOptions = {}) {
    knownKeys('RedisStore', options, OPTIONS);
    this.#options = options;
    this.keyPrefix = options.keyPrefix ?? 'ratelimit:';
    if (typeof this.keyPrefix !== 'string' || /[{}]/.test(this.keyPrefix)) {
      // A brace in the prefix would become every key's cluster hash tag and pile all buckets on one slot.
      throw configError('keyPrefix', 'must be a string without "{" or "}"', this.keyPrefix);
    }
    const min = nonNegativeInteger('minTtlSeconds', options.minTtlSeconds ?? 60);
    const max = options.maxTtlSeconds;
    if (max !== undefined && positiveInteger('maxTtlSeconds', max) < min)
      throw configError('minTtlSeconds', 'must not exceed `maxTtlSeconds`', min);
    const pad = nonNegativeInteger('ttlPaddingSeconds', options.ttlPaddingSeconds ?? 60);
    this.#maxTtlSeconds = max;
    // 0 tells the script there is no greatest TTL.
    this.#ttlMs = [min * 1000, (max ?? 0) * 1000, pad * 1000];
    this.failOpen = options.failOpen ?? true;
    if (typeof this.failOpen !== 'boolean') throw configError('failOpen', 'must be a boolean', this.failOpen);
    this.#commandTimeoutMs = timerMs('commandTimeoutMs', options.commandTimeoutMs ?? 250);
    this.#connectTimeoutMs = timerMs('connectTimeoutMs', options.connectTimeoutMs ?? 1000);
    this.#degradedRetryAfterMs = positiveInteger(
      'degradedRetryAfterMs',
      options.degradedRetryAfterMs ?? 1000,
    );
    this.#logIntervalMs = nonNegativeInteger('logIntervalMs', options.logIntervalMs ?? 5000);
    this.#logger = loggerOption(options.logger, console);
    const fallback = oneOf('fallback', options.fallback ?? 'none', ['none', 'memory'] as const);
    this.#fallbackShare = options.fallbackShare ?? 1;
    if (typeof this.#fallbackShare !== 'number' || !(this.#fallbackShare > 0 && this.#fallbackShare <= 1)) {
      throw configError('fallbackShare', 'must be a number in (0, 1]', this.#fallbackShare);
    }
    this.#clock = optionalClock(options.clock);
    // The fallback keeps its own time: the server's clock is exactly what is missing.
    this.#fallback = fallback === 'memory' ? new MemoryStore({ clock: this.#clock ?? Date.now }) : undefined;
    const denyCacheSize = nonNegativeInteger('localDenyCache', options.localDenyCache ?? 10_000);
    // With an injected clock the cache must age on the same clock as the decisions it remembers.
    this.#denials = denyCacheSize === 0 ? undefined : new DenyCache(denyCacheSize, this.#clock);
    this.#breakerThreshold = positiveInteger('breakerThreshold', options.breakerThreshold ?? 3);
    this.#probeIntervalMs = timerMs('reconnectCooldownMs', options.reconnectCooldownMs ?? 1000);

    checkConnectionOptions(options);
    if (options.client !== undefined) {
      for (const own of CONNECTION_OPTIONS) {
        if (options[own] !== undefined)
          throw configError(own, 'cannot be combined with `client` (configure the client)');
      }
      this.#client = adaptClient(options.client);
    }
  }

  /** Connects now rather than on the first decision; rejects when Redis cannot be reached in time. */
  async connect(): Promise<void> {
    await this.#ready();
  }

  /** True while some Redis node is not being waited on (see `breakerThreshold`). */
  get breakerOpen(): boolean {
    for (const breaker of this.#breakers.values()) if (breaker.isOpen) return true;
    return false;
  }

  async evaluate(request: StoreRequest): Promise<StoreResponse> {
    const { scope, id, policies } = request;
    const firstKey = this.keyPrefix + bucketKey(scope, id, memberOf(policies, 0));
    if (!request.dryRun && this.#denials !== undefined) {
      const cached = this.#denials.get(firstKey, request.cost);
      if (cached !== undefined) {
        this.metrics.localDenials++;
        return cached;
      }
    }
    const shard = this.#client?.shardOf(firstKey) ?? '';
    if (this.#breakers.get(shard)?.isOpen) return this.#degraded(request);
    return new Promise((resolve) => this.#enqueue({ request, firstKey, shard, resolve }));
  }

  /**
   * A limiter whose keys `maxTtlSeconds` would expire before they are at rest is refused, and so is one whose
   * policies the memory fallback could not scale by `fallbackShare` (scaled here, once, so no outage finds out).
   */
  checkPolicies(policies: readonly AnyPolicy[]): void {
    checkRetentionCap('maxTtlSeconds', this.#maxTtlSeconds, { ms: 1000, name: 's' }, policies);
    if (this.#fallback === undefined) return;
    try {
      this.#scaledPolicies(policies);
    } catch (cause) {
      const why = cause instanceof TollgateError ? cause.message : String(cause);
      throw configError(
        'fallbackShare',
        `leaves a policy the memory fallback cannot enforce: ${why}`,
        this.#fallbackShare,
      );
    }
  }

  /** Every bucket key this store holds (without the prefix), across every master of a cluster. */
  async *keys(): AsyncIterable<string> {
    const client = await this.#ready();
    const pattern = `${this.keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    for await (const key of client.scan(pattern)) yield key.slice(this.keyPrefix.length);
  }

  /** Forgets the given keys; rejects (`ERR_TOLLGATE_TIMEOUT`) when Redis has not done so within `commandTimeoutMs`. */
  async reset(keys: readonly string[]): Promise<void> {
    this.#fallback?.reset(keys);
    for (const key of keys) this.#denials?.delete(this.keyPrefix + key);
    const within = this.#budget();
    const client = await this.#ready(within());
    // One DEL per key: a multi-key DEL would fail across cluster slots.
    await this.#withTimeout(Promise.all(keys.map((key) => client.del(this.keyPrefix + key))), within());
  }

  /**
   * Whether decisions can be made now, within `commandTimeoutMs`: not while a node's circuit breaker is open, and
   * otherwise by the same kind of call a decision makes, one that writes. A Redis that answers PING but refuses
   * writes (out of memory, a read-only replica, a failed snapshot) fails every decision, so it is reported as such.
   */
  async health(): Promise<RedisHealth> {
    const failing = [...this.#breakers].find(([, breaker]) => breaker.isOpen);
    if (failing !== undefined) {
      const where = failing[0] === '' ? 'Redis' : `Redis node ${failing[0]}`;
      return {
        ok: false,
        error: `${where} is failing decisions: ${this.#lastErrors.get(failing[0]) ?? 'unknown error'}`,
        failOpen: this.failOpen,
      };
    }
    const started = performance.now();
    try {
      await this.#probe(`${this.keyPrefix}health`);
      return {
        ok: true,
        latencyMs: Math.round((performance.now() - started) * 100) / 100,
        failOpen: this.failOpen,
      };
    } catch (error) {
      return { ok: false, error: (error as Error).message, failOpen: this.failOpen };
    }
  }

  /**
   * Stops probing and closes the store's own connection: QUIT within `commandTimeoutMs`, then by force, so a hung
   * Redis cannot hold a shutdown. A connection still being opened is closed as soon as it exists.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const breaker of this.#breakers.values()) breaker.stop();
    this.#fallback?.close();
    const within = this.#budget();
    const client = this.#client;
    if (client !== undefined && this.#owned) await client.close(within());
    // An opening under way sees the store closed and drops what it opened (see #open); an app-owned client's
    // own connecting is not ours to wait for past the budget.
    await settles(this.#connecting, within());
  }

  #breakerFor(shard: string, probeKey: string): CircuitBreaker {
    let breaker = this.#breakers.get(shard);
    if (breaker === undefined) {
      const where = shard === '' ? 'Redis' : `Redis node ${shard}`;
      breaker = new CircuitBreaker({
        threshold: this.#breakerThreshold,
        probeIntervalMs: this.#probeIntervalMs,
        // The writes a decision needs, on the failing node (a key in the failing decision's slot): a Redis that
        // answers reads but refuses writes keeps the breaker open.
        probe: () => this.#probe(keyBeside(probeKey, this.keyPrefix)),
        onOpen: () => {
          this.metrics.breakerTrips++;
          this.#logger.warn(
            `[tollgate] ${where} keeps failing: circuit breaker open, probing in the background`,
          );
        },
        // The memory fallback keeps its counts: should Redis fail again before they are at rest, a breaker that
        // flaps must not hand every client fresh local quota each time it closes.
        onClose: () => this.#logger.warn(`[tollgate] ${where} answers again: circuit breaker closed`),
      });
      this.#breakers.set(shard, breaker);
    }
    return breaker;
  }

  /** The answer without Redis: the memory fallback's, or (without one, or when it fails) the fail mode's. */
  #degraded(request: StoreRequest, fallback: MemoryStore | null | undefined = this.#fallback): StoreResponse {
    let response: StoreResponse;
    if (fallback == null) {
      const failOpen = request.failOpen ?? this.failOpen;
      const nowMs = this.#clock?.() ?? Date.now();
      response = degradedResponse(request.policies, failOpen, this.#degradedRetryAfterMs, nowMs);
    } else {
      this.metrics.fallbackDecisions++;
      const policies = this.#scaledPolicies(request.policies);
      response = { ...fallback.evaluate({ ...request, policies }), degraded: 'fallback' };
    }
    if (response.allowed) this.metrics.degradedAllowed++;
    else this.metrics.degradedDenied++;
    return response;
  }

  #scaledPolicies(policies: readonly AnyPolicy[]): readonly AnyPolicy[] {
    let scaled = this.#scaled.get(policies);
    if (scaled === undefined) {
      scaled = policies.map((policy) => policy.scale(this.#fallbackShare));
      this.#scaled.set(policies, scaled);
    }
    return scaled;
  }

  /**
   * The client once ready, waiting at most `budgetMs`. One opening is shared by every waiter and goes on past
   * a waiter's budget (the client keeps retrying on its own), so waits that time out leave nothing behind.
   */
  #ready(budgetMs = this.#connectTimeoutMs): Promise<ScriptClient> {
    if (this.#closed)
      return Promise.reject(new TollgateError('ERR_TOLLGATE_STORE', 'the RedisStore is closed'));
    const client = this.#client;
    if (client?.isReady()) {
      this.#connected = true;
      return Promise.resolve(client);
    }
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#withTimeout(this.#connecting, budgetMs);
  }

  async #open(): Promise<ScriptClient> {
    if (this.#client === undefined) {
      const client = await openOwnedClient(this.#options, {
        connectTimeoutMs: this.#connectTimeoutMs,
        cooldownMs: this.#probeIntervalMs,
      });
      // A close() during the import: the connection must never open.
      if (this.#closed) throw new TollgateError('ERR_TOLLGATE_STORE', 'the RedisStore is closed');
      this.#client = client;
      this.#owned = true;
    }
    await this.#client.connect();
    // A client between attempts (reconnecting) has nothing to wait for yet, but it is not connected either.
    if (!this.#client.isReady()) throw new TollgateError('ERR_TOLLGATE_STORE', 'Redis is not connected');
    this.#connected = true;
    return this.#client;
  }

  /**
   * A script call with no policies: the script reads the server's clock and writes and deletes `key` (see
   * script.ts), so it fails exactly when decisions would, on the node that owns `key`.
   */
  async #probe(key: string): Promise<void> {
    const within = this.#budget();
    const client = await this.#ready(within());
    const args = ['', ...constantArguments([], this.#ttlMs, false)];
    await this.#withTimeout(this.#runScript(client, [key], args), within());
  }

  /** What is left of one `commandTimeoutMs` from now, for work done in steps (never below 1 ms). */
  #budget(): () => number {
    const deadline = performance.now() + this.#commandTimeoutMs;
    return () => Math.max(1, Math.ceil(deadline - performance.now()));
  }

  async #runScript(client: ScriptClient, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await client.evalsha(SCRIPT_SHA, keys, args);
    } catch (error) {
      // Only a missing script is cured by sending it; EVAL also caches it on whichever node owns the keys.
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      this.metrics.scriptReloads++;
      return client.eval(SCRIPT, keys, args);
    }
  }

  /**
   * Decisions of one limiter asked for in the same turn of the event loop share one script call; a batch is sent
   * at the end of the turn, or as soon as it is full. A batch shares the dry-run flag, the clock reading and, in
   * a cluster, the slot (one script's keys must share it).
   */
  #enqueue(pending: Pending): void {
    const { request } = pending;
    const nowMs = this.#clock?.();
    const slot =
      this.#options.rootNodes !== undefined || this.#client?.isCluster === true
        ? clusterSlot(pending.firstKey)
        : undefined;
    const variant =
      request.dryRun || nowMs !== undefined || slot !== undefined
        ? `${request.dryRun ? 1 : 0}:${nowMs ?? ''}:${slot ?? ''}`
        : '';
    let batches = this.#pending.get(request.policies);
    if (batches === undefined) {
      batches = new Map();
      this.#pending.set(request.policies, batches);
    }
    let batch = batches.get(variant);
    if (batch === undefined) {
      const { policies, dryRun } = request;
      batch = { policies, dryRun, nowMs, shard: pending.shard, decisions: [] };
      batches.set(variant, batch);
    }
    batch.decisions.push(pending);
    if (batch.decisions.length === MAX_BATCH) {
      batches.delete(variant);
      void this.#send(batch);
      return;
    }
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  #flush(): void {
    const pending = this.#pending;
    this.#pending = new Map();
    this.#flushScheduled = false;
    for (const batches of pending.values()) for (const batch of batches.values()) void this.#send(batch);
  }

  async #send(batch: Batch): Promise<void> {
    const { decisions, policies } = batch;
    try {
      // Only decisions made before the first connection wait for it (up to `connectTimeoutMs`); later ones never
      // wait for a reconnection, whoever started it, so each stays within `commandTimeoutMs`.
      const client = this.#connected ? this.#client : await this.#ready();
      if (!client?.isReady()) throw new TollgateError('ERR_TOLLGATE_STORE', 'Redis is not connected');
      const keys: string[] = [];
      const args = [batch.nowMs === undefined ? '' : String(batch.nowMs)];
      args.push(...this.#constantArguments(policies, batch.dryRun));
      for (const { request, firstKey } of decisions) {
        keys.push(firstKey);
        for (let i = 1; i < policies.length; i++)
          keys.push(this.keyPrefix + bucketKey(request.scope, request.id, memberOf(policies, i)));
        args.push(String(request.cost));
      }
      const reply = await this.#withTimeout(this.#runScript(client, keys, args), this.#commandTimeoutMs);
      const responses = parseReply(reply, decisions.length, policies.length);
      let failure: Error | undefined;
      for (let i = 0; i < decisions.length; i++) {
        const response = responses[i] as StoreResponse | Error;
        if (response instanceof Error) {
          failure = response;
          this.#degrade(decisions[i] as Pending);
        } else this.#answer(decisions[i] as Pending, response);
      }
      // One call, one count: a call is healthy only if every decision in it was made.
      if (failure === undefined) this.#breakers.get(batch.shard)?.success();
      else this.#callFailed(batch, failure);
    } catch (error) {
      for (const pending of decisions) this.#degrade(pending);
      this.#callFailed(batch, error);
    }
  }

  #answer({ request, firstKey, resolve }: Pending, response: StoreResponse): void {
    this.metrics.decisions++;
    if (!request.dryRun && this.#denials !== undefined) {
      if (response.allowed) this.#denials.delete(firstKey);
      else this.#denials.set(firstKey, request.cost, response, retryAfter(response));
    }
    resolve(response);
  }

  /** Every pending decision is answered, whatever the fallback does: a decision must never hang. */
  #degrade({ request, resolve }: Pending): void {
    try {
      resolve(this.#degraded(request));
    } catch (error) {
      this.#logger.error(error, '[tollgate] the memory fallback failed; answering by the fail mode');
      resolve(this.#degraded(request, null));
    }
  }

  /** A failed script call counts once against its node's breaker, whatever number of decisions it carried. */
  #callFailed(batch: Batch, error: unknown): void {
    // A closed store is neither reported nor probed: its decisions keep the fail mode, quietly.
    if (this.#closed) return;
    this.#lastErrors.set(batch.shard, (error as Error)?.message ?? String(error));
    this.#logFailure(error);
    this.#breakerFor(batch.shard, (batch.decisions[0] as Pending).firstKey).failure();
  }

  #constantArguments(policies: readonly AnyPolicy[], dryRun: boolean): readonly string[] {
    let args = this.#constantArgs.get(policies);
    if (args === undefined) {
      args = [
        constantArguments(policies, this.#ttlMs, false),
        constantArguments(policies, this.#ttlMs, true),
      ];
      this.#constantArgs.set(policies, args);
    }
    return args[dryRun ? 1 : 0];
  }

  /** One promise and one timer per call: `Promise.race` plus `finally` cost three more promises. */
  #withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.metrics.timeouts++;
        reject(new TollgateError('ERR_TOLLGATE_TIMEOUT', `Redis did not answer within ${ms} ms`));
      }, ms);
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  #logFailure(error: unknown): void {
    this.metrics.errors++;
    const now = Date.now();
    if (now - this.#lastLogAt < this.#logIntervalMs) {
      this.#suppressed++;
      return;
    }
    const suppressed = this.#suppressed > 0 ? ` (${this.#suppressed} more since the last report)` : '';
    this.#lastLogAt = now;
    this.#suppressed = 0;
    const mode =
      this.#fallback === undefined
        ? `failing ${this.failOpen ? 'open' : 'closed'} unless a limiter says otherwise`
        : 'enforcing limits per process (memory fallback)';
    this.#logger.error(
      `[tollgate] Redis unusable; ${mode}${suppressed}: ${(error as Error)?.message ?? error}`,
    );
  }
}

/** The wait that binds a denial: the longest among its policies, or -1 when one of them can never pass. */
function retryAfter(response: StoreResponse): number {
  let wait = 0;
  for (const { allowed, retryAfterMs } of response.results) {
    if (allowed) continue;
    if (retryAfterMs < 0) return -1;
    wait = Math.max(wait, retryAfterMs);
  }
  return wait;
}

/** Each decision's answer from the script's reply (see script.ts), or its error; a store error for anything else. */
function parseReply(reply: unknown, decisions: number, policies: number): (StoreResponse | Error)[] {
  // A single policy's decision is its own four figures; with several, `allowed` comes first.
  const stride = policies === 1 ? 4 : 1 + 4 * policies;
  const first = policies === 1 ? 0 : 1;
  const malformed = () =>
    new TollgateError('ERR_TOLLGATE_STORE', `unexpected script reply: ${JSON.stringify(reply)}`);
  if (!Array.isArray(reply) || reply.length !== 1 + decisions * stride) throw malformed();
  const numbers = reply as unknown[];
  const figure = (at: number): number => {
    const value = numbers[at];
    if (typeof value !== 'number') throw malformed();
    return value;
  };
  const nowMs = figure(0);
  const responses: (StoreResponse | Error)[] = [];
  for (let at = 1; at < numbers.length; at += stride) {
    const head = numbers[at];
    if (typeof head === 'string') {
      responses.push(new TollgateError('ERR_TOLLGATE_STORE', head));
      continue;
    }
    const results: PolicyResult[] = [];
    for (let i = at + first; i < at + stride; i += 4) {
      results.push({
        allowed: figure(i) === 1,
        remaining: figure(i + 1),
        resetMs: figure(i + 2),
        retryAfterMs: figure(i + 3),
      });
    }
    responses.push({ allowed: figure(at) === 1, results, nowMs });
  }
  return responses;
}

/** Decisions of one limiter waiting for the same script call. */
interface Batch {
  readonly policies: readonly AnyPolicy[];
  readonly dryRun: boolean;
  readonly nowMs: number | undefined;
  readonly shard: string;
  readonly decisions: Pending[];
}

interface Pending {
  readonly request: StoreRequest;
  /** With the prefix: the key the deny cache and the breakers know a decision by. */
  readonly firstKey: string;
  readonly shard: string;
  readonly resolve: (response: StoreResponse) => void;
}
