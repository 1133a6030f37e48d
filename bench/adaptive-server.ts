// The overloaded service the adaptive section drives: Express with N workers, each request holding one for a service time.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import express, { type RequestHandler } from 'express';
import { rateLimit } from '../src/adapters/express/express.js';
import { type AdaptiveConcurrency, adaptiveConcurrency } from '../src/adaptive/adaptive-concurrency.js';
import { aimd, gradient, gradient2, type Random, vegas } from '../src/adaptive/index.js';
import { drawServiceMs } from '../src/adaptive/simulation/service-model.js';
import { mulberry32 } from '../src/core/seeded-random.js';
import { MemoryStore } from '../src/index.js';
import { concurrency } from '../src/policies/concurrency.js';

/** The service times' seed: every run draws the same sequence of times (which request gets which is up to arrival). */
const SERVICE_SEED = 1;

/** What stands in front of the handler: nothing, a fixed limit of 10 × the workers, or an adaptive limit. */
export type Guard = 'none' | 'fixed' | 'default' | 'vegas' | 'gradient2' | 'aimd' | 'gradient';

export interface SlowServiceOptions {
  readonly guard: Guard;
  /** The service's true capacity: requests served at once; the others wait for a worker, first come first served. */
  readonly workers: number;
  readonly serviceMs: number;
  /**
   * The log-normal's sigma, as the simulation's service model has it: each request's service time is drawn with a
   * mean of `serviceMs`; 0 (the default) holds every request exactly `serviceMs`.
   */
  readonly sigma?: number;
  /** The algorithm's jitter (Vegas's probe, Envoy's gradient's measurements); default `Math.random`. */
  readonly random?: Random;
}

/** What the service saw since the counts were last taken: counts, which compare across machines, and one time. */
export interface ServiceCounts {
  /** Answered 200 by the handler. */
  served: number;
  /** Answered 503 by the limit, and of those, with a Retry-After header. */
  shed: number;
  shedWithRetryAfter: number;
  /** Requests that reached the handler, and the workers' queue each found there, summed. */
  admitted: number;
  queueFound: number;
  /** The longest the queue for a worker got, and the most requests past the limit at once. */
  maxQueue: number;
  maxInFlight: number;
  /** Requests that reached the handler with more in flight than the limit allowed: a limit that holds has none. */
  overLimit: number;
  /** The limit's range over the requests admitted (the fixed one's, or the adaptive one's as it moved). */
  lowestLimit: number;
  highestLimit: number;
  /** The p99 of a request's time in the handler (its wait for a worker, then its service), in ms. */
  handlerP99Ms: number;
  /** The p99 of the event loop's delay in firing a timer, in ms: how late the service's own timers ran. */
  loopDelayP99Ms: number;
}

export interface SlowService {
  readonly port: number;
  /** The counts since the last call, and a fresh start for them. */
  take(): ServiceCounts;
  /** Resolves once no request is in the handler: those of a load generator's closed connections run to the end. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** `size` workers, each holding a request for a service time; the other requests wait in line for one. */
class Workers {
  /** Requests in the handler: served or waiting. */
  held = 0;
  #busy = 0;
  readonly #line: (() => void)[] = [];
  #idle: (() => void)[] = [];

  constructor(
    readonly size: number,
    readonly serviceMs: () => number,
  ) {}

  get queued(): number {
    return this.#line.length;
  }

  /** Calls `done` once a worker has held the request for the service time. */
  serve(done: () => void): void {
    this.held++;
    const work = () => {
      this.#busy++;
      setTimeout(() => {
        this.#busy--;
        // Counted out before `done` answers, whose end frees the limit's slot: never more held than it admits.
        this.held--;
        done();
        this.#line.shift()?.();
        if (this.held > 0) return;
        for (const resolve of this.#idle) resolve();
        this.#idle = [];
      }, this.serviceMs());
    };
    if (this.#busy < this.size) work();
    else this.#line.push(work);
  }

  idle(): Promise<void> {
    return new Promise((resolve) => (this.held === 0 ? resolve() : this.#idle.push(resolve)));
  }
}

/** The guard's middleware, and its limit as it stands (Infinity for none). */
function guardOf(options: SlowServiceOptions): { middleware?: RequestHandler; limit: () => number } {
  const { guard, workers, random } = options;
  if (guard === 'none') return { limit: () => Infinity };
  if (guard === 'fixed') {
    const max = 10 * workers;
    // One limit for the whole service, shedding as the adaptive one does: 503 with Retry-After. A store of its own:
    // services made one after another in one process (a test's) must not share slots.
    const policy = concurrency({ max, leaseMs: '1m' });
    const store = new MemoryStore();
    const middleware = rateLimit({ policy, store, identifier: () => 'service', statusCode: 503 });
    return { middleware, limit: () => max };
  }
  const policy = adaptiveOf(guard, random);
  return { middleware: rateLimit({ policy }), limit: () => policy.limit };
}

function adaptiveOf(
  guard: Exclude<Guard, 'none' | 'fixed'>,
  random: Random | undefined,
): AdaptiveConcurrency {
  const jitter = random === undefined ? {} : { random };
  // The default as written, unless a seeded jitter is asked for: then the same algorithm with it.
  if (guard === 'default')
    return random === undefined
      ? adaptiveConcurrency()
      : adaptiveConcurrency({
          algorithm: gradient({ ...jitter, capToDemand: true, remeasureWhenFaster: true }),
        });
  const algorithm =
    guard === 'vegas'
      ? vegas(jitter)
      : guard === 'gradient2'
        ? gradient2()
        : guard === 'aimd'
          ? aimd()
          : gradient(jitter);
  return adaptiveConcurrency({ algorithm });
}

/** Each request's service time: the simulation's log-normal draw, seeded, or the mean itself when sigma is 0. */
function serviceTimes({ workers, serviceMs, sigma = 0 }: SlowServiceOptions): () => number {
  if (sigma === 0) return () => serviceMs;
  const model = { workers, meanServiceMs: serviceMs, sigma, timeoutMs: Infinity };
  const random = mulberry32(SERVICE_SEED);
  return () => drawServiceMs(model, random);
}

function freshCounts(): ServiceCounts {
  return {
    ...{ served: 0, shed: 0, shedWithRetryAfter: 0, admitted: 0, queueFound: 0, maxQueue: 0 },
    ...{ maxInFlight: 0, overLimit: 0, lowestLimit: Infinity, highestLimit: 0 },
    ...{ handlerP99Ms: Number.NaN, loopDelayP99Ms: Number.NaN },
  };
}

/** The slowed service on 127.0.0.1, on a port of the system's choosing. */
export async function startSlowService(options: SlowServiceOptions): Promise<SlowService> {
  const guard = guardOf(options);
  const workers = new Workers(options.workers, serviceTimes(options));
  let counts = freshCounts();
  // Time in the handler, in µs.
  const handlerTimes = createHistogram();
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const app = express();
  app.use((_req, res, next) => {
    res.once('finish', () => {
      if (res.statusCode !== 503) return;
      counts.shed++;
      if (res.getHeader('retry-after') !== undefined) counts.shedWithRetryAfter++;
    });
    next();
  });
  if (guard.middleware !== undefined) app.use(guard.middleware);
  app.get('/', (_req, res) => {
    const arrived = performance.now();
    const limit = guard.limit();
    counts.admitted++;
    counts.queueFound += workers.queued;
    workers.serve(() => {
      handlerTimes.record(Math.max(1, Math.round((performance.now() - arrived) * 1000)));
      counts.served++;
      res.send('ok');
    });
    if (workers.held > limit) counts.overLimit++;
    counts.maxInFlight = Math.max(counts.maxInFlight, workers.held);
    counts.maxQueue = Math.max(counts.maxQueue, workers.queued);
    counts.lowestLimit = Math.min(counts.lowestLimit, limit);
    counts.highestLimit = Math.max(counts.highestLimit, limit);
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    take: () => {
      const handlerP99Ms = handlerTimes.percentile(99) / 1000;
      const taken = { ...counts, handlerP99Ms, loopDelayP99Ms: loopDelay.percentile(99) / 1e6 };
      counts = freshCounts();
      handlerTimes.reset();
      loopDelay.reset();
      return taken;
    },
    idle: () => workers.idle(),
    close: async () => {
      loopDelay.disable();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// Run as the section's child (`adaptive-server.ts <guard> <workers> <serviceMs> <sigma>`): its port, then its counts
// when asked.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [guard, workers, serviceMs, sigma] = process.argv.slice(2);
  const service = await startSlowService({
    guard: guard as Guard,
    workers: Number(workers),
    serviceMs: Number(serviceMs),
    sigma: sigma === undefined ? 0 : Number(sigma),
  });
  process.send?.({ port: service.port });
  // 'now', as a run's warm-up ends; 'drained', once it is over and the requests it left behind have been answered.
  process.on('message', async (ask: 'now' | 'drained') => {
    if (ask === 'drained') await service.idle();
    process.send?.({ counts: service.take() });
  });
}
