// RedisStore: every decision is one atomic script call on the Redis server's clock, shared by a whole fleet.

import { listening, TRACES, type TraceContext, traced } from '../../core/trace.js';
import type { AnyPolicy, PolicyResult } from '../../policies/policy.js';
import { checkRetentionCap } from '../memory/retention.js';
import type { RetentionCap, Store, StoreRequest, StoreResponse, StoreStats } from '../store.js';
import { Batcher } from './batch.js';
import type { Pending } from './batch-outcome.js';
import { clusterSlot } from './cluster-slot.js';
import { Connection } from './connection.js';
import { DegradedPath } from './degraded-path.js';
import { DenyCache } from './deny-cache.js';
import { firstKeyOf, probeCall } from './engine/call-format.js';
import { runScript } from './engine/script-call.js';
import { StoreEngine } from './engine/store-engine.js';
import { type RedisStoreMetrics, zeroMetrics } from './metrics.js';
import { NodeBreakers } from './node-breakers.js';
import { type RedisStoreOptions, type RedisStoreSettings, resolveOptions } from './redis-store-options.js';
import { budget, withTimeout } from './time-budget.js';

export interface RedisHealth {
  readonly ok: boolean;
  readonly latencyMs?: number;
  readonly error?: string;
  readonly failOpen: boolean;
}

/**
 * Wires the parts together: a decision is answered by the deny cache when it can be, without Redis at once while
 * its node's breaker is open, and otherwise joins a batch for one script call; what Redis could not decide goes
 * to the degraded path.
 *
 * @example
 * // Limits shared by every instance of a fleet of 4; while Redis is down, each enforces a quarter of each limit.
 * const store = new RedisStore({ url: process.env.REDIS_URL, fallback: 'memory', fallbackShare: 0.25 });
 * const limiter = createLimiter({ policy: tokenBucket({ capacity: 100, refillPerSecond: 10 }), store });
 */
export class RedisStore implements Store {
  readonly metrics: RedisStoreMetrics = zeroMetrics();
  readonly failOpen: boolean;
  readonly keyPrefix: string;
  readonly retentionCap?: RetentionCap;
  readonly #settings: RedisStoreSettings;
  readonly #connection: Connection;
  readonly #breakers: NodeBreakers;
  readonly #degraded: DegradedPath;
  readonly #batcher: Batcher;
  readonly #denials: DenyCache | undefined;
  readonly #engine: StoreEngine;

  constructor(options: RedisStoreOptions = {}) {
    const settings = resolveOptions(options);
    this.#settings = settings;
    this.keyPrefix = settings.keyPrefix;
    this.failOpen = settings.failOpen;
    if (settings.maxTtlSeconds !== undefined)
      this.retentionCap = { option: 'maxTtlSeconds', ms: settings.maxTtlSeconds * 1000 };
    // With an injected clock the cache must age on the same clock as the decisions it remembers.
    this.#denials =
      settings.localDenyCache === 0 ? undefined : new DenyCache(settings.localDenyCache, settings.clock);
    this.#connection = new Connection(options, settings, this.metrics);
    this.#engine = new StoreEngine(settings.ttlMs);
    const shardOf = (key: string) => this.#connection.shardOf(key);
    this.#breakers = new NodeBreakers(settings, this.metrics, (key) => this.#probe(key), shardOf);
    this.#degraded = new DegradedPath(settings, this.metrics, this.#breakers);
    this.#batcher = new Batcher(settings, this.#connection, this.#engine, this.metrics, {
      decided: (pending, response) => this.#decided(pending, response),
      succeeded: (shard) => this.#breakers.succeeded(shard),
      // A call asked for before the slot map was known, that failed once it was (on a master that is down), is
      // that master's failure: counted on the one breaker for the whole cluster, it would fail everyone's.
      failed: (call) =>
        this.#degraded.failed(call.shard === '' ? { ...call, shard: shardOf(call.probeKey) } : call),
    });
  }

  /** Connects now rather than on the first decision; rejects when Redis cannot be reached in time. */
  async connect(): Promise<void> {
    await this.#connection.ready();
  }

  /** True while some Redis node is not being waited on (see `breakerThreshold`). */
  get breakerOpen(): boolean {
    return this.#breakers.anyOpen;
  }

  // Async, so that anything it throws (a malformed request) rejects, as a store's answer does.
  async evaluate(request: StoreRequest): Promise<StoreResponse> {
    const firstKey = firstKeyOf(this.keyPrefix, request);
    if (!listening(TRACES.store)) return this.#evaluate(request, firstKey, undefined);
    const slot = this.#settings.cluster ? clusterSlot(firstKey) : undefined;
    const trace = { key: firstKey, node: this.#connection.shardOf(firstKey), slot, action: request.action };
    return traced(TRACES.store, trace, () => this.#evaluate(request, firstKey, trace));
  }

  /** Answered by the deny cache, by the degraded path while the key's node is not waited on, or by a batch. */
  #evaluate(
    request: StoreRequest,
    firstKey: string,
    trace: TraceContext | undefined,
  ): StoreResponse | Promise<StoreResponse> {
    // Only a plain consume repeats a denial: a booking request may be admitted ahead, and a peek is a look.
    if (request.action === 'consume' && !request.maxDelayMs && this.#denials !== undefined) {
      const cached = this.#denials.get(firstKey, request.cost, request.policies);
      if (cached !== undefined) {
        this.metrics.localDenials++;
        if (trace !== undefined) trace.denyCache = true;
        return cached;
      }
    }
    const shard = this.#connection.shardOf(firstKey);
    if (this.#breakers.isOpen(shard)) return this.#degraded.answer(request);
    return new Promise((resolve) => this.#batcher.enqueue({ request, firstKey, shard, resolve, trace }));
  }

  /** The store's counters and its breakers' state now, for `tollgate/metrics` and `tollgate/otel`. */
  stats(): StoreStats {
    const { metrics } = this;
    return {
      timeouts: metrics.timeouts,
      errors: { ...metrics.errorsByKind },
      breakers: this.#breakers.states(),
      breakerTrips: metrics.breakerTrips,
      scriptReloads: metrics.scriptReloads,
      batches: metrics.batches,
      batchedDecisions: metrics.batchedDecisions,
      denyCacheHits: metrics.localDenials,
    };
  }

  /**
   * A limiter whose keys `maxTtlSeconds` would expire before they are at rest is refused, and so is one whose
   * policies the memory fallback could not scale by `fallbackShare`, or whose kind the engine runs with another
   * Lua twin; the twin of a kind the engine lacks joins it now.
   */
  checkPolicies(policies: readonly AnyPolicy[]): void {
    checkRetentionCap('maxTtlSeconds', this.#settings.maxTtlSeconds, { ms: 1000, name: 's' }, policies);
    this.#degraded.checkPolicies(policies);
    this.#engine.admit(policies);
  }

  /** Every bucket key this store holds (without the prefix), across every master of a cluster. */
  async *keys(): AsyncIterable<string> {
    const client = await this.#connection.ready();
    const pattern = `${this.keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    for await (const key of client.scan(pattern)) yield key.slice(this.keyPrefix.length);
  }

  /** Forgets the given keys; rejects (`ERR_TOLLGATE_TIMEOUT`) when Redis has not done so within `commandTimeoutMs`. */
  async reset(keys: readonly string[]): Promise<void> {
    this.#degraded.reset(keys);
    for (const key of keys) {
      this.#denials?.delete(this.keyPrefix + key);
      // A denial is remembered under the identifier's first key; resetting another of its keys (lifting a
      // lockout) must forget it too.
      if (key.startsWith('{'))
        this.#denials?.deleteStartingWith(this.keyPrefix + key.slice(0, key.indexOf('}') + 1));
    }
    const within = budget(this.#settings.commandTimeoutMs);
    const client = await this.#connection.ready(within());
    // One DEL per key: a multi-key DEL would fail across cluster slots.
    const deleted = Promise.all(keys.map((key) => client.del(this.keyPrefix + key)));
    await withTimeout(deleted, within(), this.metrics);
  }

  /**
   * Whether decisions can be made now, within `commandTimeoutMs`: not while a node's circuit breaker is open, and
   * otherwise by the same kind of call a decision makes, one that writes. A Redis that answers PING but refuses
   * writes (out of memory, a read-only replica, a failed snapshot) fails every decision, so it is reported as such.
   */
  async health(): Promise<RedisHealth> {
    const failing = this.#breakers.failing();
    if (failing !== undefined) return { ok: false, error: failing, failOpen: this.failOpen };
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
    this.#breakers.stop();
    this.#degraded.stop();
    await this.#connection.close(this.#settings.commandTimeoutMs);
  }

  /**
   * A script call with no policies: the script reads the server's clock and writes and deletes `key` (see
   * call-format.ts), so it fails exactly when decisions would, on the node that owns `key`.
   */
  async #probe(key: string): Promise<void> {
    const within = budget(this.#settings.commandTimeoutMs);
    const client = await this.#connection.ready(within());
    const call = probeCall(key, this.#settings.ttlMs);
    await withTimeout(runScript(client, this.#engine.current, call, this.metrics), within(), this.metrics);
  }

  /**
   * Redis decided: a denial is remembered until its retry time, and anything else this process spent or gave back
   * forgets the one remembered.
   */
  #decided({ request, firstKey, resolve }: Pending, response: StoreResponse): void {
    this.metrics.decisions++;
    if (request.action !== 'peek' && this.#denials !== undefined) {
      if (request.action === 'consume' && !response.allowed)
        this.#denials.set(
          firstKey,
          request.cost,
          request.policies,
          response,
          retryAfter(request.policies, response),
        );
      else this.#denials.delete(firstKey);
    }
    resolve(response);
  }
}

/**
 * The wait that binds a denial: the longest among its policies, or -1 when one of them can never pass. A full
 * concurrency limit is not remembered (0): a release anywhere frees a slot before its retry time.
 */
function retryAfter(policies: readonly AnyPolicy[], response: StoreResponse): number {
  let wait = 0;
  for (let i = 0; i < response.results.length; i++) {
    const { allowed, retryAfterMs } = response.results[i] as PolicyResult;
    if (allowed) continue;
    if ((policies[i] as AnyPolicy).retryHintMs !== undefined) return 0;
    if (retryAfterMs < 0) return -1;
    wait = Math.max(wait, retryAfterMs);
  }
  return wait;
}
