// The `redis` option's store: counters in Redis under the keys and with the expiries @fastify/rate-limit gives them.
import { configError } from '../../../core/errors.js';
import { DEFAULT_NAMESPACE } from './tollgate-store.js';
import type {
  FastifyRateLimitStore,
  RateLimitRouteParams,
  RateLimitStoreCallback,
  ResolvedRateLimitParams,
} from './types.js';

/** What is used of an ioredis client (a Redis or a Cluster): scripts defined as commands, sent by their hash. */
interface ScriptingClient {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  [command: string]: unknown;
}
type Command = (
  key: string,
  ...args: [...(string | number)[], (error: Error | null, reply?: unknown) => void]
) => void;

const HIT = 'tollgateFastifyRateLimitHit';
const READ = 'tollgateFastifyRateLimitRead';

/**
 * One hit: the key's count goes up by one; its expiry is set by the first hit of a window, and again past `max`
 * when the window restarts (mode 'continue') or backs off (mode 'backoff', doubling with each hit). Returns the
 * count and the ms until the key expires, as the plugin's Redis store does, so both share counters during a move.
 */
const HIT_LUA = `
local hits = redis.call('INCR', KEYS[1])
local window, max, mode = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
if hits > max and mode == 'backoff' then
  window = math.min(window * 2 ^ (hits - max - 1), 9007199254740991)
elseif hits ~= 1 and not (hits > max and mode == 'continue') then
  return { hits, redis.call('PTTL', KEYS[1]) }
end
redis.call('PEXPIRE', KEYS[1], string.format('%d', window))
return { hits, window }
`;
/** The count and the ms left, without counting: 0 and 0 for a key that is gone (or never expires). */
const READ_LUA = `
local hits = redis.call('GET', KEYS[1])
if not hits then return { 0, 0 } end
return { tonumber(hits), math.max(0, redis.call('PTTL', KEYS[1])) }
`;

export class RedisOptionStore implements FastifyRateLimitStore {
  readonly #client: ScriptingClient;
  readonly #prefix: string;
  readonly #mode: string;

  constructor(client: unknown, params: ResolvedRateLimitParams, prefix = DEFAULT_NAMESPACE) {
    const redis = client as Partial<ScriptingClient> | null;
    if (typeof redis?.defineCommand !== 'function')
      throw configError('redis', 'must be an ioredis client (a Redis or a Cluster)', client);
    this.#client = redis as ScriptingClient;
    // Defined once per client: the command sends the script by its hash, and loads it when Redis lacks it.
    if (typeof this.#client[HIT] !== 'function') {
      this.#client.defineCommand(HIT, { numberOfKeys: 1, lua: HIT_LUA });
      this.#client.defineCommand(READ, { numberOfKeys: 1, lua: READ_LUA });
    }
    this.#prefix = prefix;
    this.#mode = params.continueExceeding ? 'continue' : params.exponentialBackoff ? 'backoff' : 'count';
  }

  incr(key: string, callback: RateLimitStoreCallback, timeWindow: number, max: number): void {
    this.#call(HIT, key, callback, timeWindow, max, this.#mode);
  }

  read(key: string, callback: RateLimitStoreCallback): void {
    this.#call(READ, key, callback);
  }

  /** A route's counters under its method and URL, as the plugin's Redis store names them. */
  child(route: RateLimitRouteParams): RedisOptionStore {
    const { method, url } = route.routeInfo;
    return new RedisOptionStore(this.#client, route, `${this.#prefix}${String(method)}${String(url)}-`);
  }

  #call(name: string, key: string, callback: RateLimitStoreCallback, ...args: (string | number)[]): void {
    const command = this.#client[name] as Command;
    command.call(this.#client, `${this.#prefix}${key}`, ...args, (error: Error | null, reply?: unknown) => {
      if (error !== null && error !== undefined) return callback(error);
      const [current, ttl] = reply as [number, number];
      callback(null, { current, ttl });
    });
  }
}
