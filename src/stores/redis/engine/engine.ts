// The Lua engine Redis runs, as a function library and as a script: the integer prelude, the policies' Lua twins,
// and the loop over a call's decisions (main-lua.ts), composed for the twins it carries and named after its code.
import { createHash } from 'node:crypto';
import { configError } from '../../../core/errors.js';
import { integerLua } from '../../../core/integer.js';
import { builtInTwins } from '../../../policies/index.js';
import { type AnyPolicy, NAME, type PolicyKind } from '../../../policies/policy.js';
import { MAIN_LUA } from './main-lua.js';
import { STATE_LUA } from './state-lua.js';

/** The engine's code for one set of twins, and the names Redis knows it by. */
export interface Engine {
  /** Each kind the engine carries, with its twin's text. */
  readonly twins: ReadonlyMap<PolicyKind, string>;
  /** Its code as a script for EVAL, which runs it whole on every call. */
  readonly script: string;
  readonly sha: string;
  /**
   * Its code as a Redis 7 function library: its definitions run once, when it is loaded, so a call runs only run()
   * (for EVAL they are made again on every call, a large part of a lone decision's server time, and garbage for
   * Lua to sweep). Named after its own hash, so that versions of Tollgate, and engines of other twins, sharing a Redis
   * each find their own.
   */
  readonly library: string;
  readonly functionName: string;
}

/** The engine carrying `twins`: each defined the first time a call names its kind. */
function engineFor(twins: ReadonlyMap<PolicyKind, string>): Engine {
  const definitions = [...twins]
    .map(
      ([kind, lua], i) =>
        `  ${i === 0 ? 'if' : 'elseif'} kind == '${kind}' then\n  policies['${kind}'] = ${lua}`,
    )
    .join('');
  const define = `local function define(kind)\n${definitions}  end\n  return policies[kind]\nend`;
  const code = ['local policies = {}', integerLua, STATE_LUA, define, MAIN_LUA].join('\n');
  const functionName = `tollgate_${createHash('sha1').update(code).digest('hex').slice(0, 16)}`;
  const script = `local eval_keys, eval_args = KEYS, ARGV\n${code}\nreturn run(eval_keys, eval_args)`;
  return {
    twins,
    script,
    sha: createHash('sha1').update(script).digest('hex'),
    library: `#!lua name=${functionName}\n${code}\nredis.register_function('${functionName}', run)`,
    functionName,
  };
}

/** The engine of the built-in policies, which every process of a fleet builds alike. */
export const BUILT_IN_ENGINE = engineFor(new Map(Object.entries(builtInTwins)));

/**
 * The engine that carries the twins of `engine` and of `policies`: `engine` itself when it has them all, as it does
 * for the built-in policies; else one more, the twin of a kind met again with other text taking its place.
 */
export function withTwins(engine: Engine, policies: readonly AnyPolicy[]): Engine {
  const missing = policies.filter(({ kind, lua }) => engine.twins.get(kind) !== lua);
  if (missing.length === 0) return engine;
  const twins = new Map(engine.twins);
  for (const { kind, lua } of missing) {
    // Kinds are spelled into the engine's code: a direct caller of the store is held to the limiter's rule.
    if (!NAME.test(kind)) {
      throw configError('kind', 'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"', kind);
    }
    twins.set(kind, lua);
  }
  return engineFor(twins);
}
