// The Redis call format in one place: the keys and arguments of an engine call, and its reply read back.
import type { Operation, StoreAction } from '../../../policies/evaluate.js';
import type { AnyPolicy, PolicyResult } from '../../../policies/policy.js';
import { bucketKey, memberOf } from '../../key.js';
import type { StoreRequest, StoreResponse } from '../../store.js';
import { scriptError } from '../metrics.js';

/*
 * One call is a batch: requests of one limiter (same policies, same action), each on its own keys. The engine
 * (main-lua.ts) reads it.
 * KEYS: every request's keys (one per policy), request after request. A call to one node of a cluster, whose
 *       requests span slots, declares none (see `nodeCall`).
 * ARGV: now in ms ('' = the server's TIME; tests inject one), then the limiter's spec, one string the engine parses
 *       once and keeps (a limiter sends the same one on every call): the least and greatest TTL (0: none) and the
 *       TTL padding (ms), the action ('c' consume, 'p' peek, 'r' refund, 'b' block), the number of policies, then
 *       per policy its kind, the number of its parameters and those, separated by spaces; then per request its
 *       cost, its lease ('' for none) and its timing: for a consume how far ahead it may be booked (ms; after a 'w'
 *       for a waiting caller's, whose denial starts no lockout), for a refund when its units were spent (epoch ms;
 *       '' for now), then, comma-separated, each policy's resetMs in the spending decision when known. When every
 *       request has the same three they are sent once, and not at all when they are the common ones (cost 1, no
 *       lease, no wait): each argument costs the server time to read. With no policies the call is a probe of the
 *       node that owns KEYS[1] (it writes and deletes that key).
 * Reply: { now, then per request: allowed, delay, then per policy: allowed, remaining, resetMs, retryAfterMs };
 *        for a consume or a peek of one policy (narrow), per request: allowed, remaining, resetMs, and retryAfterMs
 *        when denied or the delay when admitted: each number of a reply costs the server time to write. A request
 *        that raised an error (a key of another type, say) has the message in its first place.
 */

/** The engine's name for each action. */
const ACTION_CODES: Readonly<Record<StoreAction, string>> = {
  consume: 'c',
  peek: 'p',
  refund: 'r',
  block: 'b',
};

/** A decision of a call: its request, and its first key (with the prefix), which the store has made already. */
export interface CallDecision {
  readonly request: StoreRequest;
  readonly firstKey: string;
}

/** The key a decision is known by (the deny cache's and the cluster slot's): its first policy's, with the prefix. */
export function firstKeyOf(keyPrefix: string, { scope, id, policies }: StoreRequest): string {
  return keyPrefix + bucketKey(scope, id, memberOf(policies, 0));
}

/** The limiter's spec (ARGV[2]): the same for every call of one limiter and action on one store. */
export function callSpec(
  policies: readonly AnyPolicy[],
  ttlMs: readonly number[],
  action: StoreAction,
): string {
  return [
    ...ttlMs,
    ACTION_CODES[action],
    policies.length,
    ...policies.flatMap((p) => [p.kind, p.args.length, ...p.args]),
  ].join(' ');
}

/** The call of a probe of the node that owns `key`: no policies (see above). */
export function probeCall(key: string, ttlMs: readonly number[]): EngineCall {
  return { keys: [key], args: ['', callSpec([], ttlMs, 'consume')] };
}

/**
 * `call` sent to one node of a cluster, carrying requests of several of its slots: a call's declared keys must
 * share a slot, so it declares none, and its keys lead its arguments after the clock and the spec, counted. The
 * engine's function may touch keys of several slots (its `allow-cross-slot-keys` flag) as long as they are the
 * node's own; a key that is not (its slot moved, or moving) fails its request alone, never read as new.
 */
export function nodeCall({ keys, args }: EngineCall): EngineCall {
  return {
    keys: [],
    args: [args[0] as string, args[1] as string, String(keys.length), ...keys, ...args.slice(2)],
  };
}

/** The keys and arguments of one engine call. */
export interface EngineCall {
  readonly keys: string[];
  readonly args: string[];
}

/**
 * A request's timing argument: for a refund when its units were spent ('' for now) and each policy's resetMs then
 * (`1700000000000,500,60000`), else how far ahead it may be booked, after a `w` for a waiting caller's (`w250`),
 * whose denial starts no lockout.
 */
function timingArgument({ action, maxDelayMs, waiting, spentAtMs, spentResetMs = [] }: Operation): string {
  if (action !== 'refund') return waiting === true ? `w${maxDelayMs ?? 0}` : String(maxDelayMs ?? 0);
  return spentAtMs === undefined ? '' : [spentAtMs, ...spentResetMs].join(',');
}

/** The keys and arguments of one call carrying `decisions`, for the limiter of `spec`. */
export function encodeCall(
  decisions: readonly CallDecision[],
  policies: readonly AnyPolicy[],
  spec: string,
  nowMs: number | undefined,
  keyPrefix: string,
): EngineCall {
  const keys: string[] = [];
  const args = [nowMs === undefined ? '' : String(nowMs), spec];
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
  if (!shared) args.push(...figures.flat());
  else if (!isCommon(figures[0] as string[])) args.push(...(figures[0] as string[]));
  return { keys, args };
}

/** The figures of a plain consume or peek: a cost of 1, no lease, no wait. */
const isCommon = ([cost, lease, timing]: readonly string[]) => cost === '1' && lease === '' && timing === '0';

/** Each request's answer from the engine's reply, or its error; a store error for anything else. */
export function decodeReply(
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
    const { delayMs, results } = narrow ? narrowAnswer(figure, at, allowed) : wideAnswer(figure, at, stride);
    responses.push(
      delayMs === 0 ? { allowed, results, nowMs } : { allowed, results, nowMs: nowMs + delayMs, delayMs },
    );
  }
  return responses;
}

/** A lone policy's answer: its last figure is the delay of an admission, or the retry of a denial. */
function narrowAnswer(figure: (at: number) => number, at: number, allowed: boolean) {
  const last = figure(at + 3);
  const result: PolicyResult = {
    allowed,
    remaining: figure(at + 1),
    resetMs: figure(at + 2),
    retryAfterMs: allowed ? 0 : last,
  };
  return { delayMs: allowed ? last : 0, results: [result] };
}

/** The delay, then each policy's four figures. */
function wideAnswer(figure: (at: number) => number, at: number, stride: number) {
  const results: PolicyResult[] = [];
  for (let i = at + 2; i < at + stride; i += 4) {
    results.push({
      allowed: figure(i) === 1,
      remaining: figure(i + 1),
      resetMs: figure(i + 2),
      retryAfterMs: figure(i + 3),
    });
  }
  return { delayMs: figure(at + 1), results };
}
