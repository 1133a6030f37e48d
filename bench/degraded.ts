// The degraded path, measured: decision latency while Redis is killed mid-traffic, before and after the breaker opens.
import { createLimiter, tokenBucket } from '../src/index.js';
import { RedisStore } from '../src/stores/redis/index.js';
import { startRedisServer } from '../test/harness/redis-server.js';

const DECISIONS_PER_PHASE = 20_000;

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Latencies (ms) of `count` decisions, `inFlight` at a time, and which fail mode answered them. */
async function measure(consume: () => Promise<{ degraded?: string }>, count: number, inFlight: number) {
  const latencies = new Float64Array(count);
  const modes = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const started = performance.now();
      const decision = await consume();
      latencies[i] = performance.now() - started;
      const mode = decision.degraded ?? 'redis';
      modes.set(mode, (modes.get(mode) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  latencies.sort();
  return { latencies, modes, inFlight };
}

const server = await startRedisServer();
const store = new RedisStore({ url: server.url, logger: { warn: () => {}, error: () => {} } });
const limiter = createLimiter({ policy: tokenBucket({ capacity: 1_000_000, refillPerSecond: 1000 }), store });
let client = 0;
const consume = () => limiter.consume(`client-${client++ % 10_000}`);

await store.connect();
const healthy = [
  await measure(consume, DECISIONS_PER_PHASE, 1),
  await measure(consume, DECISIONS_PER_PHASE, 64),
];
await server.kill('SIGKILL');
// The first decisions after the kill find the socket closing; they are what opens the breaker.
const transition = await measure(consume, 256, 64);
const open = [
  await measure(consume, DECISIONS_PER_PHASE, 1),
  await measure(consume, DECISIONS_PER_PHASE, 64),
];
await store.close();
await server.stop();

const row = (name: string, { latencies, modes, inFlight }: Awaited<ReturnType<typeof measure>>) =>
  [
    name.padEnd(28),
    String(inFlight).padStart(10),
    String(latencies.length).padStart(11),
    percentile(latencies, 50).toFixed(3).padStart(9),
    percentile(latencies, 99).toFixed(3).padStart(9),
    (latencies.at(-1) as number).toFixed(3).padStart(9),
    `  ${[...modes].map(([mode, n]) => `${mode}=${n}`).join(' ')}`,
  ].join('');
console.log(`degraded path: RedisStore (ioredis), token bucket, 10,000 clients, node ${process.version}`);
console.log(
  `${'phase'.padEnd(28)}${'in flight'.padStart(10)}${'decisions'.padStart(11)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}  answered by`,
);
for (const phase of healthy) console.log(row('Redis up', phase));
console.log(row('just killed (breaker trips)', transition));
for (const phase of open) console.log(row('Redis down, breaker open', phase));
console.log(
  `breaker trips: ${store.metrics.breakerTrips}, timeouts: ${store.metrics.timeouts}, errors: ${store.metrics.errors}`,
);
