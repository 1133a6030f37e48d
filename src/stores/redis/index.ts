// `tollgate/redis`: the Redis engine.
export type { IoRedisLike, NodeRedisLike, RedisClientLike } from './client.js';
export type { RootNode } from './connection-options.js';
export type { RedisStoreMetrics } from './metrics.js';
export { type RedisHealth, RedisStore } from './redis-store.js';
export type { RedisStoreOptions } from './redis-store-options.js';
