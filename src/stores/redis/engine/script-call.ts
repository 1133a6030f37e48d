// How the store calls the engine: as a function, loaded where missing, or failing that as a script.
import type { ScriptClient } from '../client.js';
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
export async function runScript(
  client: ScriptClient,
  engine: Engine,
  { keys, args }: EngineCall,
  metrics: { scriptReloads: number },
): Promise<unknown> {
  for (let loads = 0; ; loads++) {
    if (client.fcall === undefined || scriptsOnly.has(client))
      return runEval(client, engine, keys, args, metrics);
    try {
      return await client.fcall(engine.functionName, keys, args);
    } catch (error) {
      const message = messageOf(error);
      if (NO_FUNCTIONS.test(message)) return scriptsFromNowOn(client, engine, keys, args, metrics);
      if (REFUSED_WRITES.test(message)) return runEval(client, engine, keys, args, metrics);
      // Only a missing function is cured by loading it.
      if (!message.startsWith('ERR Function not found') || loads === MOST_LOADS) throw error;
    }
    try {
      await load(client, engine, metrics);
    } catch (error) {
      if (NO_FUNCTIONS.test(messageOf(error))) return scriptsFromNowOn(client, engine, keys, args, metrics);
      throw error;
    }
  }
}

/** The keys and arguments of one call (call-format.ts). */
export interface EngineCall {
  readonly keys: string[];
  readonly args: string[];
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

function scriptsFromNowOn(
  client: ScriptClient,
  engine: Engine,
  keys: string[],
  args: string[],
  metrics: { scriptReloads: number },
): Promise<unknown> {
  scriptsOnly.add(client);
  return runEval(client, engine, keys, args, metrics);
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
