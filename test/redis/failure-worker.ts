// Child process for the leak test: traffic, a killed Redis, close(), and then the process must exit by itself.
import { createClient } from 'redis';
import { createLimiter, tokenBucket } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { startRedisServer } from '../harness/redis-server.js';

process.on('unhandledRejection', (reason) => {
  console.error('unhandled rejection', reason);
  process.exit(1);
});

const library = process.argv[2];
const server = await startRedisServer();
const quiet = { warn: () => {}, error: () => {} };
const options = { commandTimeoutMs: 100, reconnectCooldownMs: 100, logger: quiet };
const nodeClient = library === 'node-redis' ? createClient({ url: server.url }) : undefined;
nodeClient?.on('error', () => {});
await nodeClient?.connect();
const store = nodeClient
  ? new RedisStore({ ...options, client: nodeClient })
  : new RedisStore({ ...options, url: server.url });
const limiter = createLimiter({ policy: tokenBucket({ capacity: 100, refillPerSecond: 1 }), store });

await Promise.all(Array.from({ length: 20 }, () => limiter.consume('w')));
await server.kill('SIGKILL');
const after = await Promise.all(Array.from({ length: 20 }, () => limiter.consume('w')));
await store.close();
// Decisions after close() still answer by the fail mode, but reopen no breaker: nothing probes a closed store.
const closed = await Promise.all(Array.from({ length: 20 }, () => limiter.consume('w')));
nodeClient?.destroy();
await server.stop();
const degraded = [...after, ...closed].filter((d) => d.degraded !== undefined).length;
console.log(`degraded=${degraded} and closed, breakerOpen=${store.breakerOpen}`);
