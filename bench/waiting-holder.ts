// The other process of the waiting section: holds the one slot when told, and frees it when told, saying when.
import { createInterface } from 'node:readline';
import { createLimiter, type Decision } from '../src/index.js';
import { RedisStore } from '../src/stores/redis/index.js';
import { HOLDER_SCOPE, heldSlot } from './waiting-slot.js';

const { url } = JSON.parse(process.argv[2] as string) as { url: string };
const store = new RedisStore({ url, commandTimeoutMs: 5000 });
const limiter = createLimiter({ policy: heldSlot(), store, scope: HOLDER_SCOPE });
let held: Decision | undefined;
for await (const line of createInterface({ input: process.stdin })) {
  const [command, identifier = ''] = line.split(' ');
  if (command === 'hold') {
    held = await limiter.consume(identifier);
    console.log(held.allowed ? 'held' : 'taken');
  } else if (command === 'release') {
    await held?.release?.();
    console.log(`released ${Date.now()}`);
  }
}
await store.close();
