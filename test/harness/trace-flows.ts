// The six flows a user meets, each one request through Express, for the tests that read their spans and trace.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { rateLimit } from '../../src/adapters/express/express.js';
import { MemoryStore, type Store, tokenBucket } from '../../src/index.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';

/** Where the Redis flows run: a server's URL, a cluster's root nodes. */
export interface FlowServers {
  readonly redisUrl?: string;
  readonly rootNodes?: readonly { readonly host: string; readonly port: number }[];
}

export interface Flow {
  readonly name: string;
  /** The store the flow's app limits on, and whether it needs a Redis server or a cluster. */
  readonly store: (servers: FlowServers) => Store & { close?(): unknown };
  /** Requests made before the one the flow is about (which spends the quota, or fills the deny cache). */
  readonly before: number;
}

const quiet = { warn: () => {}, error: () => {} };

/** Each flow's keys under a prefix of their own, so that flows sharing a server start from nothing. */
function redisStore(options: RedisStoreOptions): RedisStore {
  // A flow's first call connects and loads the engine within its budget: the default 250 ms is too little for a
  // machine running the rest of the suite beside it, and a flow that times out prints another trace.
  return new RedisStore({
    keyPrefix: `flow-${process.hrtime.bigint()}:`,
    commandTimeoutMs: 5000,
    ...options,
  });
}

export const FLOWS: readonly Flow[] = [
  { name: 'memory, allowed', store: () => new MemoryStore(), before: 0 },
  { name: 'memory, denied', store: () => new MemoryStore(), before: 1 },
  { name: 'Redis, allowed', store: ({ redisUrl }) => redisStore({ url: redisUrl as string }), before: 0 },
  // The second request is denied by Redis, which the deny cache remembers; the third never reaches Redis.
  {
    name: 'Redis, denied by the deny cache',
    store: ({ redisUrl }) => redisStore({ url: redisUrl as string }),
    before: 2,
  },
  {
    name: 'Redis unreachable, the fail mode answers',
    // Nothing listens on port 1: the connection is refused at once.
    store: () => redisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 200, logger: quiet }),
    before: 0,
  },
  {
    name: 'Redis Cluster, allowed',
    store: ({ rootNodes }) => redisStore({ rootNodes: rootNodes?.map((node) => ({ ...node })) ?? [] }),
    before: 0,
  },
];

/**
 * Runs `flow`'s requests against an Express app limited to one request per second per client, the last inside
 * `observe` (which starts and stops whatever reads the trace); returns what `observe` returned.
 */
export async function runFlow<T>(
  flow: Flow,
  servers: FlowServers,
  observe: (request: () => Promise<number>) => Promise<T>,
): Promise<T> {
  const store = flow.store(servers);
  const app = express();
  const scope = 'api';
  app.use(
    rateLimit({ policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }), store, scope, logger: quiet }),
  );
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const request = async () => (await fetch(`http://127.0.0.1:${port}/`)).status;
  try {
    for (let i = 0; i < flow.before; i++) await request();
    return await observe(request);
  } finally {
    server.close();
    await store.close?.();
  }
}
