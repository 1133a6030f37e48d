// `npm run start:redis`: the demo on RedisStore, so every instance pointed at one Redis spends from the same buckets.
import { RedisStore } from '../src/stores/redis/index.js';
import { createDemoLogger } from './demo-logger.js';
import { envFlag, envPort, refuseToStart, runDemo } from './run-demo.js';

const { REDIS_URL, REDIS_HOST, REDIS_PASSWORD, REDIS_CLUSTER_NODES } = process.env;
const failOpen = envFlag('FAIL_OPEN', true);
const requireRedis = envFlag('REQUIRE_REDIS', false);
const address = REDIS_CLUSTER_NODES
  ? { rootNodes: REDIS_CLUSTER_NODES.split(',').map(clusterNode) }
  : REDIS_URL
    ? { url: REDIS_URL }
    : { host: REDIS_HOST || '127.0.0.1', port: envPort('REDIS_PORT', 6379) };

/** One `host:port` of REDIS_CLUSTER_NODES. */
function clusterNode(entry: string): { host: string; port: number } {
  const match = /^\s*([^:\s]+):(\d{1,5})\s*$/.exec(entry);
  if (!match)
    refuseToStart(`REDIS_CLUSTER_NODES must be host:port,host:port,... (got ${JSON.stringify(entry)})`);
  return { host: match[1] as string, port: Number(match[2]) };
}

/** Where Redis is, for messages: never with the password a URL may carry. */
function redacted(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuseToStart('REDIS_URL is not a URL (expected redis://[[user]:password@]host[:port][/db])');
  }
  if (parsed.password !== '') parsed.password = '***';
  return parsed.href;
}
const where =
  'rootNodes' in address
    ? `the cluster at ${address.rootNodes.map((n) => `${n.host}:${n.port}`).join(',')}`
    : 'url' in address
      ? redacted(address.url)
      : `${address.host}:${address.port}`;

const logger = createDemoLogger();
const store = new RedisStore({
  ...address,
  logger,
  // A password inside REDIS_URL takes precedence over this one.
  ...(REDIS_PASSWORD ? { password: REDIS_PASSWORD } : {}),
  failOpen,
});
const mode = failOpen ? 'open' : 'closed';

try {
  await store.connect();
  logger.info(`tollgate demo: using Redis at ${where}; fails ${mode} whenever Redis is unreachable`);
} catch (error) {
  const why = `Redis at ${where} is unreachable (${(error as Error).message})`;
  if (requireRedis) refuseToStart(`${why}; REQUIRE_REDIS=1, so not starting`);
  logger.warn(`tollgate demo: ${why}; starting anyway, failing ${mode} until it answers`);
}

await runDemo({
  store,
  logger,
  // 503 while decisions cannot be made (Redis down, hung, or refusing writes), so a load balancer can route
  // around this instance.
  health: async () => {
    const health = await store.health();
    return { ...health, redis: health.ok ? 'ok' : 'unusable' };
  },
});
