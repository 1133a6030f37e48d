// Section 10: an overloaded Express service behind no limit, a fixed one of 10 × its capacity and adaptive ones.
import { fork } from 'node:child_process';
import { createHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { capacityPerSecond, DEFAULT_SERVICE } from '../src/adaptive/simulation/service-model.js';
import type { Guard, ServiceCounts } from './adaptive-server.js';
import { count, fixed, ratio, type Table } from './table.js';

export interface AdaptiveSettings {
  /** Each run's measured part; the warm-up before it lets an adaptive limit settle. */
  readonly seconds: number;
  readonly warmupSeconds: number;
}

/** The simulation's default service, served for real: its workers, its log-normal service times. */
const SERVICE = DEFAULT_SERVICE;
const WORKERS = SERVICE.workers;
/** Unloaded: half the workers' worth of connections, so no request ever waits for a worker. */
const UNLOADED = WORKERS / 2;
/**
 * Two overloads, in connections per worker: 4, beyond the capacity but within the fixed limit, and 12, beyond the
 * fixed limit (10 per worker) too, where three times the sockets each asking again at once delay the service's timers.
 */
const PAST_CAPACITY = 4 * WORKERS;
const PAST_BOTH = 12 * WORKERS;

/** The bound on the p99 of admitted requests, as a multiple of the unloaded p99. */
const BOUND = 2;

const VARIANTS: readonly { readonly guard: Guard; readonly name: string }[] = [
  { guard: 'none', name: 'no limit' },
  { guard: 'fixed', name: `concurrency({ max: ${10 * WORKERS}, leaseMs: '1m' }), 10 × capacity` },
  { guard: 'default', name: 'adaptiveConcurrency() (the default)' },
  { guard: 'vegas', name: 'adaptiveConcurrency({ algorithm: vegas() })' },
  { guard: 'gradient2', name: 'adaptiveConcurrency({ algorithm: gradient2() })' },
  { guard: 'aimd', name: 'adaptiveConcurrency({ algorithm: aimd() })' },
  { guard: 'gradient', name: 'adaptiveConcurrency({ algorithm: gradient() })' },
];

/** What autocannon saw of one run: 2xx answers and their latencies, the rest counted apart. */
interface Drive {
  readonly okPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly shedShare: number;
  readonly errors: number;
}

interface AdaptiveMeasure extends Drive {
  readonly name: string;
  readonly connections: number;
  readonly counts: ServiceCounts;
}

export interface AdaptiveResult {
  readonly unloaded: AdaptiveMeasure;
  readonly overloaded: readonly AdaptiveMeasure[];
}

/** The service in a child process, so that autocannon, here, never shares its event loop. */
async function startService(guard: Guard) {
  const child = fork(
    new URL('./adaptive-server.ts', import.meta.url),
    [guard, `${WORKERS}`, `${SERVICE.meanServiceMs}`, `${SERVICE.sigma}`],
    {
      execArgv: ['--import', 'tsx'],
      // Structured clones: a limit of Infinity (no limit) comes across as itself.
      serialization: 'advanced',
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`adaptive ${guard} server exited with ${code}`)));
  });
  /** The counts so far, and a fresh start for them; `drained`: once every admitted request has been answered. */
  const take = (ask: 'now' | 'drained') =>
    new Promise<ServiceCounts>((resolve) => {
      child.once('message', (message: { counts: ServiceCounts }) => resolve(message.counts));
      child.send(ask);
    });
  return { port, take, stop: () => child.kill() };
}

/**
 * One autocannon run of the warm-up and then the measured part, on the same connections: a run of its own would
 * open them all again at once, and the first requests of some waited seconds for it. `measuring` is called as the
 * warm-up ends; only requests sent after it are in the figures, each answered 2xx timed (µs), the rest counted.
 */
function drive(
  port: number,
  connections: number,
  settings: AdaptiveSettings,
  measuring: () => void,
): Promise<Drive> {
  const histogram = createHistogram();
  let ok = 0;
  let other = 0;
  const from = performance.now() + settings.warmupSeconds * 1000;
  const warmed = setTimeout(measuring, settings.warmupSeconds * 1000);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: `http://127.0.0.1:${port}/`, connections, duration: settings.warmupSeconds + settings.seconds },
      (error, result) => {
        clearTimeout(warmed);
        if (error !== null) return reject(error);
        const ms = (p: number) => (ok === 0 ? Number.NaN : histogram.percentile(p) / 1000);
        resolve({
          okPerSecond: ok / settings.seconds,
          p50Ms: ms(50),
          p99Ms: ms(99),
          shedShare: other / (ok + other),
          errors: result.errors + result.timeouts,
        });
      },
    );
    instance.on('response', (_client, status, _bytes, responseMs) => {
      if (performance.now() - responseMs < from) return;
      if (status < 200 || status > 299) other++;
      else {
        ok++;
        histogram.record(Math.max(1, Math.round(responseMs * 1000)));
      }
    });
  });
}

async function measure(
  guard: Guard,
  name: string,
  connections: number,
  settings: AdaptiveSettings,
): Promise<AdaptiveMeasure> {
  const service = await startService(guard);
  try {
    const driven = await drive(service.port, connections, settings, () => void service.take('now'));
    return { name, connections, ...driven, counts: await service.take('drained') };
  } finally {
    service.stop();
  }
}

export async function runAdaptive(settings: AdaptiveSettings): Promise<AdaptiveResult> {
  const unloaded = await measure('none', 'no limit, unloaded', UNLOADED, settings);
  const overloaded: AdaptiveMeasure[] = [];
  for (const connections of [PAST_CAPACITY, PAST_BOTH])
    for (const { guard, name } of VARIANTS)
      overloaded.push(await measure(guard, name, connections, settings));
  return { unloaded, overloaded };
}

/** A limit's range over a run: one figure when it held still, n/a for none. */
function limitRange({ lowestLimit, highestLimit }: ServiceCounts): string {
  if (!Number.isFinite(highestLimit)) return 'n/a';
  return lowestLimit === highestLimit ? String(highestLimit) : `${lowestLimit}-${highestLimit}`;
}

export function adaptiveTable(result: AdaptiveResult, settings: AdaptiveSettings): Table {
  const bound = BOUND * result.unloaded.p99Ms;
  const row = (m: AdaptiveMeasure, verdict: string) => [
    m.name,
    String(m.connections),
    count(m.okPerSecond),
    `${fixed((100 * m.okPerSecond) / capacityPerSecond(SERVICE), 0)}%`,
    fixed(m.p50Ms, 1),
    fixed(m.p99Ms, 1),
    ratio(m.p99Ms / result.unloaded.p99Ms),
    fixed(m.counts.handlerP99Ms, 1),
    fixed(m.counts.loopDelayP99Ms, 1),
    `${fixed(100 * m.shedShare, 1)}%`,
    String(m.counts.maxQueue),
    limitRange(m.counts),
    count(m.errors),
    verdict,
  ];
  return {
    title: `10. Adaptive concurrency: Express with the simulation's service (capacity ${count(capacityPerSecond(SERVICE))}/s), overloaded (runs of ${settings.seconds} s)`,
    columns: [
      'limit in front',
      'connections',
      '2xx/s',
      'of capacity',
      'p50 2xx ms',
      'p99 2xx ms',
      'p99 vs unloaded',
      'p99 in handler ms',
      'p99 loop delay ms',
      'shed (503)',
      'longest queue',
      'limit',
      'errors',
      `p99 <= ${BOUND}x unloaded (${fixed(bound, 1)} ms)`,
    ],
    rows: [
      row(result.unloaded, '-'),
      ...result.overloaded.map((m) => row(m, m.p99Ms <= bound ? 'PASS' : 'MISS')),
    ],
    notes: [
      `The handler holds one of ${WORKERS} workers per request for a service time drawn as the simulation draws them`,
      `(log-normal, mean ${SERVICE.meanServiceMs} ms, sigma ${SERVICE.sigma}; a timer); the others wait for a worker, first come first served, so`,
      'latency grows with the queue as in a service past its capacity. The service runs in a child process; autocannon,',
      "in the bench's, keeps every connection busy over loopback: a shed request is asked again at once, not after its",
      `Retry-After. Two overloads: ${PAST_CAPACITY} connections, past the capacity but within the fixed limit, and ${PAST_BOTH}, past both,`,
      "where three times the sockets asking again at once make each turn of the service's event loop longer.",
      `Each run opens with a ${settings.warmupSeconds} s warm-up on the same connections, in which an adaptive limit settles; only the`,
      'requests sent after it are in the figures. Latencies are of 2xx answers alone; a request still waiting when a run',
      'ends is in no figure, which flatters the p99 of the unshed rows. In handler: the wait for a worker and the',
      'service, timed by the service; the rest of a round trip is the two event loops and the network. Loop delay: how',
      "late the service's event loop ran its timers, which the algorithms read as queueing. Longest queue: requests",
      'waiting for a worker at once; limit: its range over the requests admitted.',
    ],
  };
}
