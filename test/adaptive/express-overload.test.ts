// A real Express service past its capacity under autocannon: the adaptive limit sheds with 503 + Retry-After and
// keeps the service's queue short, where a fixed limit of 10 × its capacity lets it grow to the limit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import autocannon from 'autocannon';
import { type Guard, type ServiceCounts, startSlowService } from '../../bench/adaptive-server.js';
import { mulberry32 } from '../../src/core/seeded-random.js';

/** 8 workers of 20 ms: 400 requests a second at most, far more than a loaded 2-core machine needs to overload. */
const WORKERS = 8;
const SERVICE_MS = 20;
/** 12 connections per worker: beyond the fixed limit of 10 per worker, so that it binds too. */
const CONNECTIONS = 12 * WORKERS;
/** Each run ends once this many requests were served: enough for a limit to settle, on a fast machine or a slow one. */
const SERVED = 500;
/** Or after this long, whichever comes first: the test stays bounded when the machine is busy. */
const MAX_SECONDS = 5;

/** The service behind `guard` overloaded by autocannon until `SERVED` requests were served; its counts. */
async function overload(guard: Guard): Promise<ServiceCounts> {
  const service = await startSlowService({
    guard,
    workers: WORKERS,
    serviceMs: SERVICE_MS,
    random: mulberry32(7),
  });
  try {
    let served = 0;
    await new Promise<void>((resolve, reject) => {
      // autocannon's stop(), which the bench's typing of its API leaves out.
      const instance = autocannon(
        { url: `http://127.0.0.1:${service.port}/`, connections: CONNECTIONS, duration: MAX_SECONDS },
        (error) => (error === null ? resolve() : reject(error)),
      ) as ReturnType<typeof autocannon> & { stop(): void };
      instance.on('response', (_client, status) => {
        if (status === 200 && ++served === SERVED) instance.stop();
      });
    });
    // Requests of the closed connections still held by the handler are counted too.
    await service.idle();
    return service.take();
  } finally {
    await service.close();
  }
}

/** The queue for a worker that an admitted request found, on average. */
function meanQueue(counts: ServiceCounts): number {
  return counts.queueFound / counts.admitted;
}

describe('an overloaded Express service', { timeout: 30_000 }, () => {
  it('behind adaptiveConcurrency(): sheds with 503 + Retry-After, its queue a fraction of a fixed 10x limit', async () => {
    const fixed = await overload('fixed');
    const adaptive = await overload('default');

    // The fixed limit holds, and binds: more connections than it admits, so the rest are shed.
    assert.equal(fixed.overLimit, 0);
    assert.ok(fixed.maxInFlight <= 10 * WORKERS);
    assert.ok(fixed.shed > 0);

    // The adaptive limit holds: no request reached the handler with more in flight than the limit then allowed.
    assert.equal(adaptive.overLimit, 0);
    assert.ok(adaptive.served > 0);
    // It sheds, every time as a busy server: 503 with a Retry-After.
    assert.ok(adaptive.shed > 0);
    assert.equal(adaptive.shedWithRetryAfter, adaptive.shed);
    // The queue each admitted request found is a small part of the fixed limit's: a count, whatever the machine.
    assert.ok(
      meanQueue(adaptive) * 5 < meanQueue(fixed),
      `mean queue found: adaptive ${meanQueue(adaptive)}, fixed ${meanQueue(fixed)}`,
    );
  });
});
