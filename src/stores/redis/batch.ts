// Batching: one limiter's decisions of one event-loop turn go to Redis as one script call, the reply read back.
import { TollgateError } from '../../core/errors.js';
import type { StoreAction } from '../../policies/evaluate.js';
import type { AnyPolicy, PolicyResult } from '../../policies/policy.js';
import { bucketKey, memberOf } from '../key.js';
import type { StoreRequest, StoreResponse } from '../store.js';
import { clusterSlot } from './cluster-slot.js';
import type { Connection } from './connection.js';
import { type RedisStoreMetrics, scriptError } from './metrics.js';
import type { RedisStoreSettings } from './redis-store-options.js';
import { constantArguments, runScript, timingArgument } from './script-call.js';
import { Deadlines } from './time-budget.js';

/**
 * Most decisions in one script call. It bounds how long one call holds the server (~0.4 ms), and full batches
 * sent at once keep the server busy while the previous batch's answers travel back: in bench/, at 64 in flight,
 * batches of 24 to 48 gave 54k-59k token-bucket decisions/s and unbounded ones 36k (one call per decision: 29k).
 */
const MAX_BATCH = 32;

/** One decision waiting for its script call. */
export interface Pending {
  readonly request: StoreRequest;
  /** With the prefix: the key the deny cache and the breakers know a decision by. */
  readonly firstKey: string;
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
  /** Per limiter (its policies array is its own) and action: ARGV up to the first request's. */
  readonly #constantArgs = new WeakMap<readonly AnyPolicy[], Map<StoreAction, readonly string[]>>();

  constructor(
    settings: BatchSettings,
    connection: Connection,
    metrics: RedisStoreMetrics,
    outcome: BatchOutcome,
  ) {
    this.#settings = settings;
    this.#connection = connection;
    this.#metrics = metrics;
    this.#outcome = outcome;
    this.#deadlines = new Deadlines(settings.commandTimeoutMs, metrics);
  }

  /**
   * Decisions of one limiter asked for in the same turn of the event loop share one script call; a batch is sent
   * at the end of the turn, or as soon as it is full. A batch shares the action, the clock reading and, in a
   * cluster, the slot (one script's keys must share it). With no call in flight there is nothing to wait for: the
   * batch goes as soon as the code that asked has run (a microtask), not at the end of the turn, which cost a lone
   * decision ~6 µs (bench/, the same call sent at once and after setImmediate); decisions asked for together still
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
      batch = { policies, action, nowMs, shard: pending.shard, decisions: [] };
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
    for (const batches of pending.values()) for (const batch of batches.values()) void this.#send(batch);
  }

  /** Hands each decision of the batch to exactly one outcome, once: what an outcome does is outside the call. */
  async #send(batch: Batch): Promise<void> {
    const { decisions, shard } = batch;
    const probeKey = (decisions[0] as Pending).firstKey;
    let responses: (StoreResponse | Error)[];
    this.#calls++;
    try {
      responses = await this.#call(batch);
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

  /** The batch's script call: each decision's answer, or its error; rejects when the call as a whole failed. */
  async #call({ decisions, policies, action, nowMs }: Batch): Promise<(StoreResponse | Error)[]> {
    this.#metrics.batches++;
    this.#metrics.batchedDecisions += decisions.length;
    const { keyPrefix } = this.#settings;
    const keys: string[] = [];
    const args = [nowMs === undefined ? '' : String(nowMs)];
    args.push(...this.#constantArguments(policies, action));
    const figures = decisions.map(({ request }) => [
      String(request.cost),
      request.lease ?? '',
      timingArgument(request),
    ]);
    // The common batch, where every request has the same cost, lease and timing, sends them once.
    const shared = figures.every(
      (f) => f[0] === figures[0]?.[0] && f[1] === figures[0]?.[1] && f[2] === figures[0]?.[2],
    );
    for (const { request, firstKey } of decisions) {
      keys.push(firstKey);
      for (let i = 1; i < policies.length; i++)
        keys.push(keyPrefix + bucketKey(request.scope, request.id, memberOf(policies, i)));
    }
    args.push(...(shared ? (figures[0] as string[]) : figures.flat()));
    const client = this.#connection.readyNow();
    const reply = await (client === undefined
      ? this.#connectingCall(keys, args)
      : this.#deadlines.bound(runScript(client, keys, args, this.#metrics)));
    return parseReply(reply, decisions.length, policies.length, action);
  }

  /**
   * A call made before the store's first connection: the wait for it and the call share one `commandTimeoutMs`,
   * so a Redis unreachable at start costs each decision that budget, not `connectTimeoutMs` (the opening goes on
   * in the background). A call whose budget ran out while it waited is never sent: its answer was given already.
   */
  async #connectingCall(keys: string[], args: string[]): Promise<unknown> {
    let late = false;
    const call = this.#connection.forDecisions().then((client) => {
      if (late) throw new TollgateError('ERR_TOLLGATE_TIMEOUT', 'the decision was answered before Redis was');
      return runScript(client, keys, args, this.#metrics);
    });
    try {
      return await this.#deadlines.bound(call);
    } catch (error) {
      late = true;
      throw error;
    }
  }

  #constantArguments(policies: readonly AnyPolicy[], action: StoreAction): readonly string[] {
    let byAction = this.#constantArgs.get(policies);
    if (byAction === undefined) {
      byAction = new Map();
      this.#constantArgs.set(policies, byAction);
    }
    let args = byAction.get(action);
    if (args === undefined) {
      args = constantArguments(policies, this.#settings.ttlMs, action);
      byAction.set(action, args);
    }
    return args;
  }
}

/** Each request's answer from the script's reply (see script.ts), or its error; a store error for anything else. */
function parseReply(
  reply: unknown,
  decisions: number,
  policies: number,
  action: StoreAction,
): (StoreResponse | Error)[] {
  // A consume or a peek of one policy answers with that policy's figures alone.
  const narrow = policies === 1 && (action === 'consume' || action === 'peek');
  // Per request: allowed, delay, then four figures per policy.
  const stride = narrow ? 4 : 2 + 4 * policies;
  const malformed = () => scriptError(`unexpected script reply: ${JSON.stringify(reply)}`);
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
      responses.push(scriptError(head));
      continue;
    }
    const allowed = figure(at) === 1;
    let delayMs = 0;
    const results: PolicyResult[] = [];
    if (narrow) {
      // The last figure is the delay of an admission, or the retry of a denial.
      const last = figure(at + 3);
      if (allowed) delayMs = last;
      results.push({
        allowed,
        remaining: figure(at + 1),
        resetMs: figure(at + 2),
        retryAfterMs: allowed ? 0 : last,
      });
    } else {
      delayMs = figure(at + 1);
      for (let i = at + 2; i < at + stride; i += 4) {
        results.push({
          allowed: figure(i) === 1,
          remaining: figure(i + 1),
          resetMs: figure(i + 2),
          retryAfterMs: figure(i + 3),
        });
      }
    }
    responses.push(
      delayMs === 0 ? { allowed, results, nowMs } : { allowed, results, nowMs: nowMs + delayMs, delayMs },
    );
  }
  return responses;
}
