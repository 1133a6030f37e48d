// Another instance for the concurrency wait test: holds a slot of the shared limit, and frees it when told.
import { createInterface } from 'node:readline';
import { createLimiter } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { WAIT_SCOPE, waitPolicy } from './concurrency-wait-policy.js';

const { url } = JSON.parse(process.argv[2] as string) as { url: string };
const store = new RedisStore({ url, commandTimeoutMs: 5000 });
const limiter = createLimiter({ policy: waitPolicy(), store, scope: WAIT_SCOPE });
const holder = await limiter.consume('client');
if (!holder.allowed) throw new Error('the worker found the slot taken');
console.log('held');
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'release') continue;
  await holder.release?.();
  console.log(`released ${Date.now()}`);
  break;
}
await store.close();
