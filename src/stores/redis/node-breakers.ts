// One circuit breaker per Redis node, so a node that keeps failing is no longer waited on while the others still are.
import type { StoreBreaker } from '../store.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { keyBeside } from './cluster-slot.js';
import type { RedisStoreMetrics } from './metrics.js';
import type { RedisStoreSettings } from './redis-store-options.js';

type BreakerSettings = Pick<
  RedisStoreSettings,
  'keyPrefix' | 'breakerThreshold' | 'reconnectCooldownMs' | 'logger'
>;

/**
 * Nodes are known by their shard ('' for the one node, or for a cluster whose slot map is not known yet: one breaker
 * for all then, not one per slot). A cluster's masters fail alone, so each has a breaker, created on first failure.
 */
export class NodeBreakers {
  readonly #settings: BreakerSettings;
  readonly #metrics: RedisStoreMetrics;
  /** Resolves once the node that owns the key can make decisions again. */
  readonly #probe: (key: string) => Promise<void>;
  /** The node that owns a key, as the client knows it now ('' when it does not). */
  readonly #shardOf: (key: string) => string;
  readonly #breakers = new Map<string, CircuitBreaker>();
  /** Why the last failed call to each node failed, for health(). */
  readonly #lastErrors = new Map<string, string>();

  constructor(
    settings: BreakerSettings,
    metrics: RedisStoreMetrics,
    probe: (key: string) => Promise<void>,
    shardOf: (key: string) => string,
  ) {
    this.#settings = settings;
    this.#metrics = metrics;
    this.#probe = probe;
    this.#shardOf = shardOf;
  }

  /** True while some node is not being waited on. */
  get anyOpen(): boolean {
    for (const breaker of this.#breakers.values()) if (breaker.isOpen) return true;
    return false;
  }

  /** True while the node `shard` is not being waited on: its decisions are answered without Redis at once. */
  isOpen(shard: string): boolean {
    return this.#breakers.get(shard)?.isOpen === true;
  }

  /** Why decisions fail on the first node whose breaker is open, for health(); undefined when none is open. */
  failing(): string | undefined {
    const failing = [...this.#breakers].find(([, breaker]) => breaker.isOpen);
    if (failing === undefined) return undefined;
    return `${where(failing[0])} is failing decisions: ${this.#lastErrors.get(failing[0]) ?? 'unknown error'}`;
  }

  /** Each node's breaker, open or not; one closed breaker for the whole store while no node has failed yet. */
  states(): StoreBreaker[] {
    if (this.#breakers.size === 0) return [{ node: '', open: false }];
    return [...this.#breakers].map(([node, breaker]) => ({ node, open: breaker.isOpen }));
  }

  succeeded(shard: string): void {
    this.#breakers.get(shard)?.success();
  }

  /** One failed call to `shard`, whatever number of decisions it carried; `probeKey` is a key of its slot. */
  failed(shard: string, probeKey: string, error: unknown): void {
    this.#lastErrors.set(shard, (error as Error)?.message ?? String(error));
    this.#breakerFor(shard, probeKey).failure();
  }

  /** Stops every probe for good (the store is closing). */
  stop(): void {
    for (const breaker of this.#breakers.values()) breaker.stop();
  }

  #breakerFor(shard: string, probeKey: string): CircuitBreaker {
    let breaker = this.#breakers.get(shard);
    if (breaker === undefined) {
      const { logger } = this.#settings;
      breaker = new CircuitBreaker({
        threshold: this.#settings.breakerThreshold,
        probeIntervalMs: this.#settings.reconnectCooldownMs,
        probe: () => this.#probeNode(shard, probeKey),
        onOpen: () => {
          this.#metrics.breakerTrips++;
          logger.warn(
            `[tollgate] ${where(shard)} keeps failing: circuit breaker open, probing in the background`,
          );
        },
        // The memory fallback keeps its counts: should Redis fail again before they are at rest, a breaker that
        // flaps must not hand every client fresh local quota each time it closes.
        onClose: () => logger.warn(`[tollgate] ${where(shard)} answers again: circuit breaker closed`),
      });
      this.#breakers.set(shard, breaker);
    }
    return breaker;
  }

  /**
   * The writes a decision needs, on the failing node (a key in the failing decision's slot): a Redis that answers
   * reads but refuses writes keeps the breaker open. The breaker of a cluster whose slot map was not known stood
   * for reaching the cluster at all: once the key's master is known, that master's own breaker judges it, so a
   * master that is down cannot keep the whole cluster reported as failing.
   */
  async #probeNode(shard: string, probeKey: string): Promise<void> {
    if (shard === '' && this.#shardOf(probeKey) !== '') return;
    await this.#probe(keyBeside(probeKey, this.#settings.keyPrefix));
  }
}

/** How the logs and health() name a node. */
function where(shard: string): string {
  return shard === '' ? 'Redis' : `Redis node ${shard}`;
}
