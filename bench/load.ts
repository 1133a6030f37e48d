// Closed-loop load on the direct API: N calls in flight for a fixed time; throughput and per-call latency.
import { createHistogram } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** One contender, opened: a decision per call, and how to read its outcome. */
export interface Decider {
  /** Resolves with the library's own answer; a rejection that is not an Error is a denial (rate-limiter-flexible). */
  decide(key: string): Promise<unknown>;
  allowed(outcome: unknown): boolean;
}

export interface LoadResult {
  readonly decisions: number;
  readonly denied: number;
  readonly perSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

/**
 * A full collection before each run, so that no run pays for the garbage of the runs before it: a mark-compact of
 * the bench's own heap (up to ~250 MB between collections) once paused a 1-in-flight run for half a second.
 */
setFlagsFromString('--expose-gc');
export const collectGarbage = runInNewContext('gc') as () => void;

/** One call in this many is timed: enough samples for a p99, and two clock reads too few to flatten the ratios. */
const SAMPLE_EVERY = 8;
/** The deadline is checked this often, for the same reason. */
const CHECK_EVERY = 256;

export async function closedLoop(
  decider: Decider,
  keys: readonly string[],
  inFlight: number,
  durationMs: number,
): Promise<LoadResult> {
  collectGarbage();
  const histogram = createHistogram();
  const started = performance.now();
  const deadline = started + durationMs;
  let decisions = 0;
  let denied = 0;
  let stop = false;
  const worker = async (offset: number) => {
    let i = offset;
    while (!stop) {
      const key = keys[i++ % keys.length] as string;
      const timed = decisions % SAMPLE_EVERY === 0;
      const t0 = timed ? performance.now() : 0;
      let allowed: boolean;
      try {
        allowed = decider.allowed(await decider.decide(key));
      } catch (error) {
        if (error instanceof Error) throw error;
        allowed = false;
      }
      if (timed) histogram.record(Math.max(1, Math.round((performance.now() - t0) * 1e6)));
      if (!allowed) denied++;
      if (++decisions % CHECK_EVERY === 0 && performance.now() >= deadline) stop = true;
    }
  };
  // Workers start far apart in the key sequence, so no two walk the same keys in step.
  const stride = Math.floor(keys.length / inFlight);
  await Promise.all(Array.from({ length: inFlight }, (_, w) => worker(w * stride)));
  const seconds = (performance.now() - started) / 1000;
  return {
    decisions,
    denied,
    perSecond: decisions / seconds,
    p50Us: histogram.percentile(50) / 1000,
    p99Us: histogram.percentile(99) / 1000,
  };
}

/**
 * Every unit once per round, interleaved and rotated each round, so that a slow moment of the machine lands on a
 * different unit each time and no unit always runs right after the same neighbour.
 */
export async function inRotation<T>(
  units: readonly T[],
  rounds: number,
  run: (unit: T) => Promise<void>,
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const shift = Math.floor((round * units.length) / rounds);
    for (const unit of [...units.slice(shift), ...units.slice(0, shift)]) await run(unit);
  }
}

/** Every key once, 64 at a time, so that each key's first write is done before anything is measured. */
export async function touchEveryKey(decider: Decider, keys: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) await decider.decide(keys[next++] as string);
  };
  await Promise.all(Array.from({ length: 64 }, worker));
}
