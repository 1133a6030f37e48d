// The skip/fail policy for Redis-backed suites: skip loudly without Redis, fail instead when REQUIRE_REDIS=1.
import { describe, it } from 'node:test';
import { redisCliBinary, redisServerBinary } from './redis-server.js';

export type RedisSuiteKind = 'server' | 'cluster';

function isSet(name: string): boolean {
  const value = process.env[name];
  return value !== undefined && value !== '';
}

/** undefined when suites of this kind can run; otherwise why not. */
export function redisSkipReason(kind: RedisSuiteKind = 'server'): string | undefined {
  if (isSet(kind === 'server' ? 'TEST_REDIS_URL' : 'TEST_REDIS_CLUSTER_NODES')) return undefined;
  if (redisServerBinary() === undefined) return 'no redis-server binary';
  // Fault tests and cluster creation shell out to redis-cli.
  if (redisCliBinary() === undefined) return 'no redis-cli binary';
  return undefined;
}

function describeIfRedis(kind: RedisSuiteKind, name: string, fn: () => void): void {
  const reason = redisSkipReason(kind);
  if (reason === undefined) {
    describe(name, fn);
    return;
  }
  if (process.env.REQUIRE_REDIS === '1') {
    // A failing test rather than a throw at load time, so the report names the suite and the reason.
    describe(name, () => {
      it('has Redis available', () => {
        throw new Error(`REQUIRE_REDIS=1 but Redis ${kind} suite "${name}" cannot run: ${reason}`);
      });
    });
    return;
  }
  process.stderr.write(
    `[tollgate] SKIPPING Redis suite "${name}": ${reason} (set REQUIRE_REDIS=1 to fail instead)\n`,
  );
  describe(name, { skip: reason }, fn);
}

/** node:test `describe` for suites that need a standalone Redis (own redis-server, or TEST_REDIS_URL). */
export function describeWithRedis(name: string, fn: () => void): void {
  describeIfRedis('server', name, fn);
}

/** node:test `describe` for suites that need a Redis Cluster (own processes, or TEST_REDIS_CLUSTER_NODES). */
export function describeWithRedisCluster(name: string, fn: () => void): void {
  describeIfRedis('cluster', name, fn);
}
