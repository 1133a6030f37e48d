// `npm run start:redis`: the demo on RedisStore, so every instance pointed at one Redis spends from the same buckets.
import { connectStore, EnvError, storeFromEnv } from '../src/cli/store-from-env.js';
import type { RedisStore } from '../src/stores/redis/index.js';
import { createDemoLogger } from './demo-logger.js';
import { refuseToStart, runDemo } from './run-demo.js';

const logger = createDemoLogger();
let store: RedisStore;
try {
  // The store the `tollgate serve` command builds from the same variables, but on Redis even when none is set.
  const chosen = await storeFromEnv(process.env, { logger, redisByDefault: true });
  if (chosen.kind !== 'redis')
    throw new Error('storeFromEnv gave no RedisStore though redisByDefault is set');
  store = chosen.store;
  const connected = await connectStore(chosen);
  logger[connected.level](`tollgate demo: ${connected.message}`);
} catch (error) {
  if (!(error instanceof EnvError)) throw error;
  refuseToStart(error.message);
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
