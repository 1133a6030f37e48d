// Batching: one limiter's decisions of one event-loop turn go to Redis as one engine call, scheduled here.
import { AsyncResource } from 'node:async_hooks';
import { timeoutError } from '../../core/errors.js';
import { listening, TRACES, type TraceContext, traced } from '../../core/trace.js';
import type { StoreAction } from '../../policies/evaluate.js';
import type { AnyPolicy } from '../../policies/policy.js';
import type { StoreResponse } from '../store.js';
import { clusterSlot } from './cluster-slot.js';
import type { Connection } from './connection.js';
import { type CallDecision, decodeReply, encodeCall } from './engine/call-format.js';
import { type EngineCall, runScript } from './engine/script-call.js';
import type { StoreEngine } from './engine/store-engine.js';
import type { RedisStoreMetrics } from './metrics.js';
import type { RedisStoreSettings } from './redis-store-options.js';
import { Deadlines } from './time-budget.js';

/**
 * Most decisions in one script call. It bounds how long one call holds the server, and full batches sent at once
 * keep the server busy while the previous batch's answers travel back: bounded batches of about this size carried
 * more decisions a second than unbounded ones, and both far more than one call per decision (docs/benchmarks.md).
 */
const MAX_BATCH = 32;

/** One decision waiting for its script call. */
export interface Pending extends CallDecision {
  /** The store call's trace, when someone listens: told the size of the batch it went in. */
  readonly trace: TraceContext | undefined;
  /** The node that owned `firstKey` when the decision was asked for ('' when not known). */
  readonly shard: string;
  readonly resolve: (response: StoreResponse) => void;
}

/** Decisions of one script call that Redis did not make, and why. */
export interface FailedCall {
  readonly shard: string;
  /** A key of the call's slot, on the node that failed it: what a probe of that node writes beside. */
  readonly probeKey: string;
  readonly decisions: readonly Pending[];
  /** The call's error, or the last of its decisions' errors. */
  readonly error: unknown;
}

/** Where each call's outcome goes: every decision it carried is handed to exactly one of these. */
export interface BatchOutcome {
  /** Redis made this decision. */
  decided(pending: Pending, response: StoreResponse): void;
  /** Every decision of a call to `shard` was made: one success for its node. */
  succeeded(shard: string): void;
  /** Some or all decisions of a call were not made: one failure for its node, whatever their number. */
  failed(call: FailedCall): void;
}

/** Requests of one limiter and action waiting for the same script call. */
interface Batch {
  readonly policies: readonly AnyPolicy[];
  readonly action: StoreAction;
  readonly nowMs: number | undefined;
  readonly shard: string;
  readonly decisions: Pending[];
  /** Traced only: the async context of the batch's first decision, which its call is traced in. */
  readonly context: AsyncResource | undefined;
}

type BatchSettings = Pick<
  RedisStoreSettings,
  'keyPrefix' | 'ttlMs' | 'commandTimeoutMs' | 'clock' | 'cluster'
>;

export class Batcher {
  readonly #settings: BatchSettings;
  readonly #connection: Connection;
  readonly #metrics: RedisStoreMetrics;
  readonly #outcome: BatchOutcome;
  /** Decisions asked for during this turn of the event loop, by limiter and then by batch; sent when it ends. */
  #pending = new Map<readonly AnyPolicy[], Map<string, Batch>>();
  #flushScheduled = false;
  /** Script calls sent and not yet answered. */
  #calls = 0;
  readonly #deadlines: Deadlines;
  readonly #engine: StoreEngine;

  constructor(
    settings: BatchSettings,
    connection: Connection,
    engine: StoreEngine,
    metrics: RedisStoreMetrics,
    outcome: BatchOutcome,
  ) {
    this.#settings = settings;
    this.#engine = engine;
    this.#connection = connection;
    this.#metrics = metrics;
    this.#outcome = outcome;
    this.#deadlines = new Deadlines(settings.commandTimeoutMs, metrics);
  }

  /**
   * Decisions of one limiter asked for in the same turn of the event loop share one script call; a batch is sent
   * at the end of the turn, or as soon as it is full. A batch shares the action, the clock reading and, in a
   * cluster, the slot (one script's keys must share it). With no call in flight there is nothing to wait for: the
   * batch goes as soon as the code that asked has run (a microtask), not at the end of the turn, a wait a lone
   * decision paid for nothing (docs/benchmarks.md has the figure); decisions asked for together still
   * share it, and while a call is in flight the next batch gathers until the turn ends, as before.
   */
  enqueue(pending: Pending): void {
    const { request } = pending;
    const nowMs = this.#settings.clock?.();
    const slot = this.#settings.cluster ? clusterSlot(pending.firstKey) : undefined;
    const variant =
      request.action !== 'consume' || nowMs !== undefined || slot !== undefined
        ? `${request.action}:${nowMs ?? ''}:${slot ?? ''}`
        : '';
    let batches = this.#pending.get(request.policies);
    if (batches === undefined) {
      batches = new Map();
      this.#pending.set(request.policies, batches);
    }
    let batch = batches.get(variant);
    if (batch === undefined) {
      const { policies, action } = request;
      // Traced, a batch is sent in the async context of its first decision, whatever flush sends it.
      const context = pending.trace === undefined ? undefined : new AsyncResource('tollgate:batch');
      batch = { policies, action, nowMs, shard: pending.shard, decisions: [], context };
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
      if (this.#calls === 0) queueMicrotask(() => this.#flush());
      else setImmediate(() => this.#flush());
    }
  }

  #flush(): void {
    const pending = this.#pending;
    this.#pending = new Map();
    this.#flushScheduled = false;
    for (const batches of pending.values()) {
      for (const batch of batches.values()) {
        if (batch.context === undefined) void this.#send(batch);
        else batch.context.runInAsyncScope(() => void this.#send(batch));
      }
    }
  }

  /** Hands each decision of the batch to exactly one outcome, once: what an outcome does is outside the call. */
  async #send(batch: Batch): Promise<void> {
    const { decisions, shard } = batch;
    const probeKey = (decisions[0] as Pending).firstKey;
    let responses: (StoreResponse | Error)[];
    // A traced store call is told the size of the batch it went in (every decision of a batch is traced, or none).
    if ((decisions[0] as Pending).trace !== undefined)
      for (const { trace } of decisions) (trace as TraceContext).batch = decisions.length;
    this.#calls++;
    try {
      responses = await this.#traced(batch, probeKey);
    } catch (error) {
      this.#outcome.failed({ shard, probeKey, decisions, error });
      return;
    } finally {
      this.#calls--;
    }
    const failed: Pending[] = [];
    let error: Error | undefined;
    for (let i = 0; i < decisions.length; i++) {
      const response = responses[i] as StoreResponse | Error;
      if (response instanceof Error) {
        error = response;
        failed.push(decisions[i] as Pending);
      } else this.#outcome.decided(decisions[i] as Pending, response);
    }
    // One call, one count: a call is healthy only if every decision in it was made.
    if (error === undefined) this.#outcome.succeeded(shard);
    else this.#outcome.failed({ shard, probeKey, decisions: failed, error });
  }

  /** The batch's call as one traced step, when someone listens; each of its decisions told its batch's size. */
  #traced(batch: Batch, probeKey: string): Promise<(StoreResponse | Error)[]> {
    if (!listening(TRACES.engine)) return this.#call(batch);
    const { decisions, shard, action, policies } = batch;
    // Named after the engine the call runs, which a limiter's first call may extend.
    this.#engine.constantArguments(policies, action);
    const slot = this.#settings.cluster ? clusterSlot(probeKey) : undefined;
    const context = {
      engine: this.#engine.current.functionName,
      node: shard,
      slot,
      decisions: decisions.length,
      action,
    };
    return traced(TRACES.engine, context, async () => {
      try {
        return await this.#call(batch);
      } finally {
        // A call made before the slot map was known names its node once the call has found it.
        if (context.node === '') context.node = this.#connection.shardOf(probeKey);
        for (const { trace } of decisions) if (trace?.node === '') trace.node = context.node;
      }
    });
  }

  /** The batch's engine call: each decision's answer, or its error; rejects when the call as a whole failed. */
  async #call({ decisions, policies, action, nowMs }: Batch): Promise<(StoreResponse | Error)[]> {
    this.#metrics.batches++;
    this.#metrics.batchedDecisions += decisions.length;
    const constant = this.#engine.constantArguments(policies, action);
    const call = encodeCall(decisions, policies, constant, nowMs, this.#settings.keyPrefix);
    const client = this.#connection.readyNow();
    const reply = await (client === undefined
      ? this.#connectingCall(call)
      : this.#deadlines.bound(runScript(client, this.#engine.current, call, this.#metrics)));
    return decodeReply(reply, decisions.length, policies.length, action);
  }

  /**
   * A call made before the store's first connection: the wait for it and the call share one `commandTimeoutMs`,
   * so a Redis unreachable at start costs each decision that budget, not `connectTimeoutMs` (the opening goes on
   * in the background). A call whose budget ran out while it waited is never sent: its answer was given already.
   */
  async #connectingCall(call: EngineCall): Promise<unknown> {
    let late = false;
    const sent = this.#connection.forDecisions().then((client) => {
      if (late) throw timeoutError('the decision was answered before Redis was');
      return runScript(client, this.#engine.current, call, this.#metrics);
    });
    try {
      return await this.#deadlines.bound(sent);
    } catch (error) {
      late = true;
      throw error;
    }
  }
}
