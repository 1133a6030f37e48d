// Child process (run with --expose-gc): the Node heap one memory store holds per tracked key, printed as JSON.

import { MemoryStore as ErlMemoryStore, type Options as ErlOptions } from 'express-rate-limit';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { createLimiter, MemoryStore } from '../src/index.js';
import { policyOf, TOLLGATE_POLICIES, type TollgatePolicy } from './contenders.js';
import { addressIdentity } from './keys.js';

export interface HeapReply {
  readonly bytesPerKey: number;
}

/** One request per key, as in the Redis half of the section. */
const QUOTA = { limit: 10_000, windowMs: 60_000 };

interface Tracked {
  decide(key: string): Promise<unknown>;
  /** Keys the store holds: checked after the measurement, which also keeps the store alive until then. */
  size(): number;
}

function storeFor(name: string, keys: number): Tracked {
  if ((TOLLGATE_POLICIES as readonly string[]).includes(name)) {
    const store = new MemoryStore({ maxBuckets: keys + 1, autoCleanup: false });
    const limiter = createLimiter({ policy: policyOf(name as TollgatePolicy, QUOTA), store });
    return { decide: (key) => limiter.consume(key), size: () => store.size };
  }
  if (name === 'express-rate-limit') {
    const store = new ErlMemoryStore();
    store.init({ windowMs: QUOTA.windowMs } as ErlOptions);
    return { decide: (key) => store.increment(key), size: () => store.current.size + store.previous.size };
  }
  const limiter = new RateLimiterMemory({ points: QUOTA.limit, duration: QUOTA.windowMs / 1000 });
  // Its storage is a private Map: read only to check the count.
  const storage = (limiter as unknown as { _memoryStorage: { _storage: Map<string, unknown> } })
    ._memoryStorage;
  return { decide: (key) => limiter.consume(key), size: () => storage._storage.size };
}

/** The heap plus ArrayBuffer contents (where typed arrays keep their data, outside the heap proper). */
function settledHeap(): number {
  const collect = globalThis.gc as () => void;
  collect();
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

const [name = '', keysArg = '0'] = process.argv.slice(2);
const keys = Number(keysArg);
const store = storeFor(name, keys);
// One call first, so that code and constants the store allocates once are in the baseline.
await store.decide('warm-up');
const before = settledHeap();
// Each key is a fresh string, as a request's address would be: whatever the store keeps of it is counted.
for (let i = 0; i < keys; i++) await store.decide(addressIdentity(i));
const after = settledHeap();
const held = store.size() - 1;
if (held !== keys) throw new Error(`${name} holds ${held} keys, not ${keys}`);
const reply: HeapReply = { bytesPerKey: (after - before) / keys };
process.stdout.write(JSON.stringify(reply));
