// `tollgate/redis`: the Redis engine.
export type { IoRedisLike, NodeRedisLike, RedisClientLike } from './client.js';
export {
  type RedisHealth,
  RedisStore,
  type RedisStoreMetrics,
  type RedisStoreOptions,
  type RootNode,
} from './redis-store.js';
