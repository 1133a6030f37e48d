// Batching: one limiter's decisions of one event-loop turn go to Redis as one engine call, scheduled here.
import { AsyncResource } from 'node:async_hooks';
import { listening, TRACES, type TraceContext, traced } from '../../core/trace.js';
import type { StoreAction } from '../../policies/evaluate.js';
import type { AnyPolicy } from '../../policies/policy.js';
import type { StoreResponse } from '../store.js';
import type { BatchOutcome, Pending } from './batch-outcome.js';
import type { ScriptClient } from './client.js';
import { clusterSlot } from './cluster-slot.js';
import type { Connection } from './connection.js';
import { decodeReply, encodeCall, nodeCall } from './engine/call-format.js';
import {
  misrouted,
  nodeCalls,
  noteRefusals,
  runNodeCall,
  runScript,
  SLOT_BY_SLOT,
} from './engine/script-call.js';
import type { StoreEngine } from './engine/store-engine.js';
import type { RedisStoreMetrics } from './metrics.js';
import { NodeFlow } from './node-flow.js';
import type { RedisStoreSettings } from './redis-store-options.js';
import { budget, Deadlines, withTimeout } from './time-budget.js';

/**
 * Most decisions in one script call. It bounds how long one call holds the server, and full batches sent at once
 * keep the server busy while the previous batch's answers travel back: bounded batches of about this size carried
 * more decisions a second than unbounded ones, and both far more than one call per decision (docs/benchmarks.md).
 */
const MAX_BATCH = 32;

/** Requests of one limiter and action waiting for the same script call. */
interface Batch {
  readonly policies: readonly AnyPolicy[];
  readonly action: StoreAction;
  readonly nowMs: number | undefined;
  readonly shard: string;
  readonly decisions: Pending[];
  /** Traced only: the async context of the batch's first decision, which its call is traced in. */
  readonly context: AsyncResource | undefined;
  /** A call to the node `shard` whose decisions may span its slots, rather than a call of one slot. */
  readonly node: boolean;
  /**
   * What is left of the decisions' budget, for a call sent again slot by slot or a node's batch that waited for a
   * call in flight (it waits once); else its call has a budget of its own.
   */
  readonly within?: () => number;
  /** A node's batch that waits: the calls to its node that had ended when it began to wait (see `NodeFlow`). */
  readonly waitedSince?: number;
}

type BatchSettings = Pick<RedisStoreSettings, 'keyPrefix' | 'commandTimeoutMs' | 'clock' | 'cluster'>;

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
  readonly #nodes = new NodeFlow();
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
   * cluster, the node that serves its keys (a call to a node may touch keys of several of its slots), or the slot
   * where the node is not known or a call cannot span slots. With no call in flight there is nothing to wait for:
   * the batch goes as soon as the code that asked has run (a microtask), not at the end of the turn, a wait a lone
   * decision paid for nothing (docs/benchmarks.md has the figure); decisions asked for together still share it,
   * and while a call is in flight the next batch gathers until the turn ends, as before.
   */
  enqueue(pending: Pending): void {
    const { request } = pending;
    const nowMs = this.#settings.clock?.();
    const node = this.#settings.cluster && pending.shard !== '' && this.#nodeCalls();
    const route = this.#settings.cluster ? (node ? pending.shard : clusterSlot(pending.firstKey)) : undefined;
    const variant =
      request.action !== 'consume' || nowMs !== undefined || route !== undefined
        ? `${request.action}:${nowMs ?? ''}:${route ?? ''}`
        : '';
    const batches = this.#batchesOf(request.policies);
    let batch = batches.get(variant);
    if (batch === undefined) {
      const { policies, action } = request;
      // Traced, a batch is sent in the async context of its first decision, whatever flush sends it.
      const context = pending.trace === undefined ? undefined : new AsyncResource('tollgate:batch');
      batch = { policies, action, nowMs, shard: pending.shard, decisions: [], context, node };
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

  /** Whether calls may carry decisions of several slots of one node: a ready cluster client that runs functions. */
  #nodeCalls(): boolean {
    const client = this.#connection.readyNow();
    return client !== undefined && nodeCalls(client);
  }

  /**
   * Sends every batch gathered, but a node's that waits for a call in flight to that node (see `NodeFlow`): it is
   * sent once one of them ends, carrying what gathered meanwhile, within a budget that started when it began to
   * wait.
   */
  #flush(): void {
    const pending = this.#pending;
    this.#pending = new Map();
    this.#flushScheduled = false;
    for (const [policies, batches] of pending) {
      for (const [variant, batch] of batches) {
        if (batch.node && this.#nodes.waits(batch.shard, batch.decisions.length, batch.waitedSince))
          this.#hold(policies, variant, batch);
        else if (batch.context === undefined) void this.#send(batch);
        else batch.context.runInAsyncScope(() => void this.#send(batch));
      }
    }
  }

  /** The batches gathering for one limiter, by variant. */
  #batchesOf(policies: readonly AnyPolicy[]): Map<string, Batch> {
    let batches = this.#pending.get(policies);
    if (batches === undefined) {
      batches = new Map();
      this.#pending.set(policies, batches);
    }
    return batches;
  }

  #hold(policies: readonly AnyPolicy[], variant: string, batch: Batch): void {
    const batches = this.#batchesOf(policies);
    if (batch.waitedSince !== undefined) batches.set(variant, batch);
    else {
      const waitedSince = this.#nodes.endedCalls(batch.shard);
      batches.set(variant, { ...batch, within: budget(this.#settings.commandTimeoutMs), waitedSince });
    }
  }

  /** A node call ended: what waited for it is sent. */
  #nodeCallEnded(shard: string): void {
    this.#nodes.ended(shard);
    if (this.#pending.size > 0 && !this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(() => this.#flush());
    }
  }

  /**
   * Hands each decision of the batch to exactly one outcome, once: what an outcome does is outside the call. A
   * decision of a node call that the node no longer serves (its slot moved or is moving) is sent again in a call
   * of its slot, within what is left of its budget, where the client follows the cluster's redirections.
   */
  async #send(batch: Batch): Promise<void> {
    const { decisions, shard } = batch;
    const probeKey = (decisions[0] as Pending).firstKey;
    const within = batch.within ?? (batch.node ? budget(this.#settings.commandTimeoutMs) : undefined);
    let responses: (StoreResponse | Error)[];
    // A traced store call is told the size of the batch it went in (every decision of a batch is traced, or none).
    if ((decisions[0] as Pending).trace !== undefined)
      for (const { trace } of decisions) (trace as TraceContext).batch = decisions.length;
    this.#calls++;
    if (batch.node) this.#nodes.began(shard);
    try {
      responses = await this.#traced(batch, probeKey);
    } catch (error) {
      if (error === SLOT_BY_SLOT) this.#slotBySlot(batch, decisions, within);
      else this.#outcome.failed({ shard, probeKey, decisions, error });
      return;
    } finally {
      this.#calls--;
      if (batch.node) this.#nodeCallEnded(shard);
    }
    const failed: Pending[] = [];
    const moved: Pending[] = [];
    let error: Error | undefined;
    for (let i = 0; i < decisions.length; i++) {
      const response = responses[i] as StoreResponse | Error;
      const pending = decisions[i] as Pending;
      if (!(response instanceof Error)) this.#outcome.decided(pending, response);
      else if (batch.node && misrouted(response)) moved.push(pending);
      else {
        error = response;
        failed.push(pending);
      }
    }
    // One call, one count: a call is healthy only if every decision in it was made (or belonged elsewhere).
    if (error === undefined) this.#outcome.succeeded(shard);
    else this.#outcome.failed({ shard, probeKey, decisions: failed, error });
    if (moved.length > 0) this.#slotBySlot(batch, moved, within);
  }

  /** Sends `decisions` of a node call again, in calls of one slot each, within what is left of their budget. */
  #slotBySlot(batch: Batch, decisions: readonly Pending[], within: (() => number) | undefined): void {
    this.#metrics.resentBySlot += decisions.length;
    const bySlot = new Map<number, Pending[]>();
    for (const pending of decisions) {
      const slot = clusterSlot(pending.firstKey);
      const group = bySlot.get(slot);
      if (group === undefined) bySlot.set(slot, [pending]);
      else group.push(pending);
    }
    for (const group of bySlot.values()) {
      // Blamed, should it fail, on the node the client names now, not the one that said the key was not its own.
      const shard = this.#connection.shardOf((group[0] as Pending).firstKey);
      void this.#send({
        ...batch,
        shard,
        decisions: group,
        node: false,
        ...(within === undefined ? {} : { within }),
      });
    }
  }

  /** The batch's call as one traced step, when someone listens; each of its decisions told its batch's size. */
  #traced(batch: Batch, probeKey: string): Promise<(StoreResponse | Error)[]> {
    if (!listening(TRACES.engine)) return this.#call(batch);
    const { decisions, shard, action, policies } = batch;
    // Named after the engine the call runs, which a limiter's first call may extend.
    this.#engine.spec(policies, action);
    // A node call spans slots: it is known by its node alone.
    const slot = this.#settings.cluster && !batch.node ? clusterSlot(probeKey) : undefined;
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
  async #call(batch: Batch): Promise<(StoreResponse | Error)[]> {
    const { decisions, policies, action, nowMs } = batch;
    this.#metrics.batches++;
    this.#metrics.batchedDecisions += decisions.length;
    const spec = this.#engine.spec(policies, action);
    const call = encodeCall(decisions, policies, spec, nowMs, this.#settings.keyPrefix);
    const client = this.#connection.readyNow();
    const { within } = batch;
    const bound = (sent: Promise<unknown>) =>
      within === undefined ? this.#deadlines.bound(sent) : withTimeout(sent, within(), this.#metrics);
    let reply: Promise<unknown>;
    // A node call's client went away since it was batched: its decisions go slot by slot, once it is back.
    if (client === undefined)
      reply = batch.node
        ? Promise.reject(SLOT_BY_SLOT)
        : this.#connection.whenConnected(
            (client) => runScript(client, this.#engine.current, call, this.#metrics),
            bound,
          );
    else if (batch.node) {
      const key = (decisions[0] as Pending).firstKey;
      reply = bound(runNodeCall(client, this.#engine.current, key, nodeCall(call), this.#metrics));
    } else reply = bound(runScript(client, this.#engine.current, call, this.#metrics));
    const responses = decodeReply(await reply, decisions.length, policies.length, action);
    if (batch.node) noteRefusals(client as ScriptClient, responses);
    return responses;
  }
}
