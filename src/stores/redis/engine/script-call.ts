// How the store calls the engine: as a function, loaded where missing, or failing that as a script.
import type { ScriptClient } from '../client.js';
import type { EngineCall } from './call-format.js';
import type { Engine } from './engine.js';

/** Clients found unable to use functions (a server before Redis 7, or a user not allowed them). */
const scriptsOnly = new WeakSet<ScriptClient>();
/** The libraries being loaded for a client, by name: every call that found one missing waits for its one load. */
const loading = new WeakMap<ScriptClient, Map<string, Promise<void>>>();
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
export function runScript(
  client: ScriptClient,
  engine: Engine,
  call: EngineCall,
  metrics: { scriptReloads: number },
): Promise<unknown> {
  const fcall = client.fcall;
  const script = () => runEval(client, engine, call.keys, call.args, metrics);
  if (fcall === undefined || scriptsOnly.has(client)) return script();
  return runFunction(client, engine, (name) => fcall(name, call.keys, call.args), script, metrics);
}

/**
 * Runs a node call (call-format.ts) on the master that serves `key`: as a function only, since a script cannot be
 * sent to a node without keys. Where the engine runs as a script, or the server refuses the call's writes or its
 * keys of several slots, it rejects with `SLOT_BY_SLOT`, for the caller to send its decisions slot by slot.
 */
export function runNodeCall(
  client: ScriptClient,
  engine: Engine,
  key: string,
  call: EngineCall,
  metrics: { scriptReloads: number },
): Promise<unknown> {
  const fcallOn = client.fcallOn;
  const slotBySlot = () => Promise.reject(SLOT_BY_SLOT);
  if (fcallOn === undefined || !nodeCalls(client)) return slotBySlot();
  // A node the client holds no connection to (dropped from its pool before its slot map changed): slot by slot.
  const send = (name: string) => fcallOn(key, name, call.args) ?? slotBySlot();
  return runFunction(client, engine, send, slotBySlot, metrics);
}

/** The answer of a node call that must be made slot by slot instead. */
export const SLOT_BY_SLOT = new Error('this call must be sent slot by slot');

/** Clients whose server refused a call's keys of several slots (a server that ignores the function's flag). */
const slotsOnly = new WeakSet<ScriptClient>();

/** Whether a client's calls may carry decisions of several slots of one node. */
export function nodeCalls(client: ScriptClient): boolean {
  return client.fcallOn !== undefined && !scriptsOnly.has(client) && !slotsOnly.has(client);
}

/**
 * Whether a decision of a node call failed because the node does not serve its key now (its slot moved, or is
 * moving, or the cluster is down there), or refused keys of several slots: it is sent again slot by slot, where
 * the client follows redirections.
 */
export function misrouted(error: Error): boolean {
  return NOT_LOCAL.test(error.message) || CROSS_SLOT.test(error.message);
}

const NOT_LOCAL = /non local key|cluster is down/;
const CROSS_SLOT = /do not hash to the same slot/;

/** A server that refused keys of several slots in one call (one that ignores the flag): slot by slot from now on. */
export function noteRefusals(client: ScriptClient, responses: readonly unknown[]): void {
  for (const response of responses)
    if (response instanceof Error && CROSS_SLOT.test(response.message)) slotsOnly.add(client);
}

/** The function call loop: a missing library is loaded and the call made again; no functions, `fallback`. */
async function runFunction(
  client: ScriptClient,
  engine: Engine,
  fcall: (name: string) => Promise<unknown>,
  fallback: () => Promise<unknown>,
  metrics: { scriptReloads: number },
): Promise<unknown> {
  for (let loads = 0; ; loads++) {
    try {
      return await fcall(engine.functionName);
    } catch (error) {
      const message = messageOf(error);
      if (NO_FUNCTIONS.test(message)) return scriptsFromNowOn(client, fallback);
      if (REFUSED_WRITES.test(message)) return fallback();
      // Only a missing function is cured by loading it.
      if (!message.startsWith('ERR Function not found') || loads === MOST_LOADS) throw error;
    }
    try {
      await load(client, engine, metrics);
    } catch (error) {
      if (NO_FUNCTIONS.test(messageOf(error))) return scriptsFromNowOn(client, fallback);
      throw error;
    }
  }
}

/** One load of a library per client at a time, counted once. */
function load(client: ScriptClient, engine: Engine, metrics: { scriptReloads: number }): Promise<void> {
  let libraries = loading.get(client);
  if (libraries === undefined) {
    libraries = new Map();
    loading.set(client, libraries);
  }
  let pending = libraries.get(engine.functionName);
  if (pending === undefined) {
    metrics.scriptReloads++;
    pending = client.loadLibrary(engine.library).finally(() => libraries.delete(engine.functionName));
    libraries.set(engine.functionName, pending);
  }
  return pending;
}

function scriptsFromNowOn(client: ScriptClient, fallback: () => Promise<unknown>): Promise<unknown> {
  scriptsOnly.add(client);
  return fallback();
}

async function runEval(
  client: ScriptClient,
  engine: Engine,
  keys: string[],
  args: string[],
  metrics: { scriptReloads: number },
): Promise<unknown> {
  try {
    return await client.evalsha(engine.sha, keys, args);
  } catch (error) {
    // Only a missing script is cured by sending it.
    if (!messageOf(error).startsWith('NOSCRIPT')) throw error;
    metrics.scriptReloads++;
    return client.eval(engine.script, keys, args);
  }
}

const messageOf = (error: unknown) => String((error as Error)?.message);
