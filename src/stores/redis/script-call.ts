// How the store calls the engine: its arguments, and a call that runs it as a function or, failing that, a script.
import type { Operation, StoreAction } from '../../policies/evaluate.js';
import type { AnyPolicy } from '../../policies/policy.js';
import type { ScriptClient } from './client.js';
import { FUNCTION_NAME, LIBRARY, SCRIPT, SCRIPT_SHA } from './script.js';

/** The script's name for each action. */
const ACTION_CODES: Readonly<Record<StoreAction, string>> = {
  consume: 'c',
  peek: 'p',
  refund: 'r',
  block: 'b',
};

/**
 * A request's timing argument: for a refund when its units were spent ('' for now) and each policy's resetMs then
 * (`1700000000000,500,60000`), else how far ahead it may be booked, after a `w` for a waiting caller's (`w250`),
 * whose denial starts no lockout.
 */
export function timingArgument({
  action,
  maxDelayMs,
  waiting,
  spentAtMs,
  spentResetMs = [],
}: Operation): string {
  if (action !== 'refund') return waiting === true ? `w${maxDelayMs ?? 0}` : String(maxDelayMs ?? 0);
  return spentAtMs === undefined ? '' : [spentAtMs, ...spentResetMs].join(',');
}

/** ARGV from the TTL bounds to the last policy: the same for every batch of one limiter and action on one store. */
export function constantArguments(
  policies: readonly AnyPolicy[],
  ttlMs: readonly number[],
  action: StoreAction,
): string[] {
  return [
    ...ttlMs.map(String),
    ACTION_CODES[action],
    String(policies.length),
    ...policies.flatMap((p) => [p.kind, ...p.args.map(String)]),
  ];
}

/** Clients found unable to use functions (a server before Redis 7, or a user not allowed them). */
const scriptsOnly = new WeakSet<ScriptClient>();
/** The library being loaded for a client: every call that found it missing waits for the one load. */
const loading = new WeakMap<ScriptClient, Promise<void>>();
/** A server without functions, or a user whose ACL refuses FCALL or FUNCTION LOAD (not a key it may not touch). */
const NO_FUNCTIONS = /^ERR unknown command|^NOPERM.*\b(fcall|function)\b/i;
/**
 * A server that refuses a whole function call that may write (out of memory, a read-only replica, a failed
 * snapshot) still runs a script, whose writes alone fail: a denial, which writes nothing, is still made.
 */
const REFUSED_WRITES = /^(OOM|READONLY|MISCONF)\b/;

/**
 * Loads of the library one call may wait for: a server flushed again between a load and the call that follows it
 * (FUNCTION FLUSH in a loop, a restart) lacks it again, and the call is made again after the next load, a few
 * times, never for ever.
 */
const MOST_LOADS = 3;

/**
 * Runs the engine: as a Redis 7 function, loaded again only when a server lacks it (a fresh server, a restart
 * without persistence, FUNCTION FLUSH), on every master of a cluster. A server that cannot run functions runs it
 * as a script instead, from then on, by its SHA, sent in full only when that server lacks it (SCRIPT FLUSH, a
 * restart); EVAL also caches it on whichever node owns the keys.
 */
export async function runScript(
  client: ScriptClient,
  keys: string[],
  args: string[],
  metrics: { scriptReloads: number },
): Promise<unknown> {
  for (let loads = 0; ; loads++) {
    if (client.fcall === undefined || scriptsOnly.has(client)) return runEval(client, keys, args, metrics);
    try {
      return await client.fcall(FUNCTION_NAME, keys, args);
    } catch (error) {
      const message = messageOf(error);
      if (NO_FUNCTIONS.test(message)) return scriptsFromNowOn(client, keys, args, metrics);
      if (REFUSED_WRITES.test(message)) return runEval(client, keys, args, metrics);
      // Only a missing function is cured by loading it.
      if (!message.startsWith('ERR Function not found') || loads === MOST_LOADS) throw error;
    }
    try {
      await load(client, metrics);
    } catch (error) {
      if (NO_FUNCTIONS.test(messageOf(error))) return scriptsFromNowOn(client, keys, args, metrics);
      throw error;
    }
  }
}

/** One load of the library per client at a time, counted once. */
function load(client: ScriptClient, metrics: { scriptReloads: number }): Promise<void> {
  let pending = loading.get(client);
  if (pending === undefined) {
    metrics.scriptReloads++;
    pending = client.loadLibrary(LIBRARY).finally(() => loading.delete(client));
    loading.set(client, pending);
  }
  return pending;
}

function scriptsFromNowOn(
  client: ScriptClient,
  keys: string[],
  args: string[],
  metrics: { scriptReloads: number },
): Promise<unknown> {
  scriptsOnly.add(client);
  return runEval(client, keys, args, metrics);
}

async function runEval(
  client: ScriptClient,
  keys: string[],
  args: string[],
  metrics: { scriptReloads: number },
): Promise<unknown> {
  try {
    return await client.evalsha(SCRIPT_SHA, keys, args);
  } catch (error) {
    // Only a missing script is cured by sending it.
    if (!messageOf(error).startsWith('NOSCRIPT')) throw error;
    metrics.scriptReloads++;
    return client.eval(SCRIPT, keys, args);
  }
}

const messageOf = (error: unknown) => String((error as Error)?.message);
