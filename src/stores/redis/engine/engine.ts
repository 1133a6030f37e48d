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
        // Each on lines of its own: a twin that ends in a comment must not swallow the next `elseif`.
        `  ${i === 0 ? 'if' : 'elseif'} kind == '${kind}' then\n  policies['${kind}'] = ${lua}\n`,
    )
    .join('');
  const define = `local function define(kind)\n${definitions}  end\n  return policies[kind]\nend`;
  const code = ['local policies = {}', integerLua, STATE_LUA, define, MAIN_LUA].join('\n');
  // The flag lets one call touch keys of several slots of a cluster node (call-format.ts, `nodeCall`). It is part of
  // what the name is the hash of: a library of the same code registered without it must not pass for this one.
  const flags = "flags = { 'allow-cross-slot-keys' }";
  const functionName = `tollgate_${createHash('sha1').update(code).update(flags).digest('hex').slice(0, 16)}`;
  const script = `local eval_keys, eval_args = KEYS, ARGV\n${code}\nreturn run(eval_keys, eval_args)`;
  return {
    twins,
    script,
    sha: createHash('sha1').update(script).digest('hex'),
    library: `#!lua name=${functionName}\n${code}\nredis.register_function{function_name = '${functionName}', callback = run, ${flags}}`,
    functionName,
  };
}

/** The engine of the built-in policies, which every process of a fleet builds alike. */
export const BUILT_IN_ENGINE = engineFor(new Map(Object.entries(builtInTwins)));

/**
 * The engine that carries the twins of `engine` and of `policies`: `engine` itself when it has them all, as it does
 * for the built-in policies; else one more. A kind is one twin: a policy that brings another text for a kind the
 * engine carries is refused, since every limiter of that kind on the store would run it.
 */
export function withTwins(engine: Engine, policies: readonly AnyPolicy[]): Engine {
  let twins: Map<PolicyKind, string> | undefined;
  for (const { kind, lua } of policies) {
    const carried = (twins ?? engine.twins).get(kind);
    if (carried === lua) continue;
    if (carried !== undefined) {
      throw configError(
        'policy',
        `of kind "${kind}" brings a Lua twin other than the one the store runs for it`,
      );
    }
    // Kinds are spelled into the engine's code: a direct caller of the store is held to the limiter's rule.
    if (!NAME.test(kind)) throw configError('kind', 'must be a name that needs no quoting', kind);
    twins ??= new Map(engine.twins);
    twins.set(kind, lua);
  }
  return twins === undefined ? engine : engineFor(inOrder(twins));
}

/** The built-in twins first, then the others by kind: processes that met the same kinds run the same library. */
function inOrder(twins: ReadonlyMap<PolicyKind, string>): ReadonlyMap<PolicyKind, string> {
  const others = [...twins].filter(([kind]) => !(kind in builtInTwins)).sort(([a], [b]) => (a < b ? -1 : 1));
  return new Map([...BUILT_IN_ENGINE.twins, ...others]);
}
