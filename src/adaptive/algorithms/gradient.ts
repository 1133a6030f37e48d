// Envoy's adaptive concurrency gradient controller: a limit steered by a minimum round trip measured at low concurrency.
import type { LimitAlgorithm, LimitSample } from './algorithm.js';
import { type GradientOptions, type GradientSettings, gradientSettings } from './gradient-options.js';

export type { GradientOptions } from './gradient-options.js';

/** Envoy's gradient algorithm, with what it measures. */
export interface GradientAlgorithm extends LimitAlgorithm {
  /** A minimum round trip is being measured: the limit is pinned to `minConcurrency` until it is. */
  readonly measuringMinRtt: boolean;
}

/**
 * Updates in a row that suggest a stale minimum and start a new measurement: at `minConcurrency` outside a
 * measurement (Envoy's rule), or, with `remeasureWhenFaster`, faster than the minimum by more than `buffer` (one
 * such update is noise as often as not; five in a row, half a second by default, are a service that recovered).
 */
const STREAK = 5;

/**
 * Envoy's gradient controller (`adaptive_concurrency` filter), exact to its arithmetic. Now and then it measures the
 * minimum round trip: the limit drops to `minConcurrency` until `requestCount` round trips of requests sent since
 * are in, and their `sampleAggregatePercentile` is the minimum; the limit it had comes back, and the next measurement
 * starts `minRttCalcIntervalMs` later, plus up to `jitter` percent of it. Every `concurrencyUpdateIntervalMs` (if
 * round trips came in), the percentile of those round trips is the sampled round trip, and
 *
 *     gradient = clamp((minimum * (1 + buffer)) / sampled, 0.5, 2)
 *     limit = trunc(limit * gradient + sqrt(limit * gradient)), within minConcurrency..maxConcurrencyLimit
 *
 * Five updates in a row at `minConcurrency` start a measurement at once. Percentiles are those of Envoy's
 * histogram (two significant digits, interpolated within a bucket), over round trips in whole µs. Envoy's timers
 * fire on their own; here they fire when the limit (or `rtt`) is read or a sample comes in, each one whose time has
 * passed, in the order and at the times Envoy's would have. Drops are ignored, as in Envoy, and so is `inFlight`
 * unless `capToDemand` is on.
 * A minimum measured during a slowdown goes stale when it ends; `remeasureWhenFaster` and `capToDemand`, both off
 * by default (Envoy's behaviour), address that and the limit's climb to `maxConcurrencyLimit` under light load.
 *
 * @example
 * // Measure the minimum round trip every 30 s (with 10 requests in flight meanwhile), update the limit every 100 ms.
 * const algorithm = gradient({ minRttCalcIntervalMs: 30_000, minConcurrency: 10, maxConcurrencyLimit: 500 });
 * algorithm.limit; // 10 until 50 round trips are in
 * algorithm.sample({ rttMs: 12.5, inFlight: 4, dropped: false });
 */
export function gradient(options: GradientOptions = {}): GradientAlgorithm {
  return new GradientController(gradientSettings(options));
}

class GradientController implements GradientAlgorithm {
  readonly name = 'gradient';
  readonly #settings: GradientSettings;
  readonly #histogram = new LatencyHistogram();
  #limit: number;
  /** The limit to restore when the minimum is measured; 0 (no limit is) outside a measurement. */
  #deferredLimit = 0;
  /** Updates in a row at `minConcurrency`, outside a measurement. */
  #streak = 0;
  /** Updates in a row faster than the minimum by more than `buffer`, for `remeasureWhenFaster`. */
  #fasterStreak = 0;
  /** Requests sent before the current measurement began are not sampled: they ran at the old concurrency. */
  #epoch = Number.NEGATIVE_INFINITY;
  /** The most requests in flight among this interval's samples, for `capToDemand`. */
  #peakInFlight = 0;
  #minRttNs: number | undefined;
  #sampledNs: number | undefined;
  /** The timers' deadlines on the clock, infinite while disarmed. */
  #minRttTimer = Number.POSITIVE_INFINITY;
  #sampleTimer = Number.POSITIVE_INFINITY;

  constructor(settings: GradientSettings) {
    this.#settings = settings;
    this.#limit = settings.minConcurrency;
    const start = settings.clock();
    if (settings.fixedMinRttMs === undefined) this.#startMeasuring(start);
    else this.#minRttNs = settings.fixedMinRttMs * 1e6;
    // Stryker disable next-line ArithmeticOperator: a deadline an interval early, on the same beat, finds no samples
    this.#sampleTimer = start + settings.updateIntervalMs;
  }

  get limit(): number {
    this.#catchUp(this.#settings.clock());
    return this.#limit;
  }

  get rtt(): Readonly<Record<string, number>> {
    this.#catchUp(this.#settings.clock());
    return {
      ...(this.#minRttNs === undefined ? {} : { minimum: this.#minRttNs / 1e6 }),
      ...(this.#sampledNs === undefined ? {} : { sampled: this.#sampledNs / 1e6 }),
    };
  }

  get measuringMinRtt(): boolean {
    this.#catchUp(this.#settings.clock());
    return this.#deferredLimit > 0;
  }

  sample({ rttMs, inFlight }: LimitSample): number {
    const now = this.#settings.clock();
    this.#catchUp(now);
    if (now - rttMs < this.#epoch) return this.#limit;
    this.#peakInFlight = Math.max(this.#peakInFlight, inFlight);
    // Envoy's clock counts whole ns and the filter truncates a round trip to µs.
    this.#histogram.add(Math.trunc(Math.round(rttMs * 1e6) / 1000));
    this.#finishMeasuring(now);
    return this.#limit;
  }

  /** Fires every timer due by `now`, earliest first; on a tie the measurement's (see `#fireSampleTimer`). */
  #catchUp(now: number): void {
    // Mutants of this loop and of the next deadline below never end it: each would cost mutation testing a whole
    // timeout (and counts as killed anyway), so they are not made.
    // Stryker disable all
    for (;;) {
      const measuring = this.#minRttTimer;
      const sampling = this.#sampleTimer;
      if (measuring <= now && measuring <= sampling) {
        this.#minRttTimer = Number.POSITIVE_INFINITY;
        this.#startMeasuring(measuring);
      } else if (sampling <= now) this.#fireSampleTimer(sampling, now);
      else return;
    }
    // Stryker restore all
  }

  /**
   * A live Envoy runs the update timer's callback a little after its deadline and arms it again from then, so it
   * drifts behind its nominal beat: due at the same time as the measurement timer, it fires second.
   */
  // Stryker disable next-line BlockStatement: a timer that fires and is not armed anew never ends the catch-up
  #fireSampleTimer(at: number, now: number): void {
    if (this.#deferredLimit > 0) {
      // Envoy's timer gives up during a measurement; finishing it arms the timer again.
      this.#sampleTimer = Number.POSITIVE_INFINITY;
      return;
    }
    this.#recalculate(at);
    // The histogram is now empty, so the firings until `now` would find nothing to do: skip to the first deadline
    // past `now`. Those after a measurement starts would find it running, and finishing it arms the timer anew.
    const interval = this.#settings.updateIntervalMs;
    // Stryker disable next-line ArithmeticOperator: a deadline not past `now` never ends the catch-up (see above)
    this.#sampleTimer = at + interval * (Math.floor((now - at) / interval) + 1);
  }

  #update(next: number, at: number): void {
    const { minConcurrency } = this.#settings;
    const old = this.#limit;
    this.#limit = next;
    if (this.#deferredLimit === 0 && old === minConcurrency && next === minConcurrency) this.#streak++;
    else this.#streak = 0;
    if (this.#streak >= STREAK && this.#settings.fixedMinRttMs === undefined) this.#minRttTimer = at;
  }

  #startMeasuring(at: number): void {
    // Stryker disable next-line ConditionalExpression: the timer that calls this is armed only outside a measurement
    if (this.#deferredLimit > 0) return;
    this.#deferredLimit = this.#limit;
    this.#update(this.#settings.minConcurrency, at);
    this.#histogram.clear();
    this.#epoch = at;
  }

  #finishMeasuring(at: number): void {
    const settings = this.#settings;
    if (this.#deferredLimit === 0 || this.#histogram.count < settings.requestCount) return;
    this.#minRttNs = this.#histogram.takePercentileUs(settings.percentile) * 1000;
    this.#update(this.#deferredLimit, at);
    this.#deferredLimit = 0;
    this.#minRttTimer = at + jittered(settings.minRttIntervalMs, settings.jitter, settings.random);
    // Stryker disable next-line ArithmeticOperator: a deadline an interval early, on the same beat, finds no samples
    this.#sampleTimer = at + settings.updateIntervalMs;
  }

  #recalculate(at: number): void {
    if (this.#histogram.count === 0) return;
    const sampledNs = this.#histogram.takePercentileUs(this.#settings.percentile) * 1000;
    this.#sampledNs = sampledNs;
    const minRttNs = this.#minRttNs as number;
    const raw = (minRttNs + minRttNs * this.#settings.buffer) / sampledNs;
    // Envoy's std::min(2.0, NaN) is 2 (NaN < 2 is false), where Math.min's is NaN: 0 / 0, round trips under 1 µs.
    const gradient = Number.isNaN(raw) ? 2 : Math.max(0.5, Math.min(2, raw));
    const scaled = this.#limit * gradient;
    const next = this.#demanded(Math.trunc(scaled + Math.sqrt(scaled)));
    const stale = this.#staleMinimum(sampledNs, minRttNs);
    // A minimum that looks stale is not trusted to raise the limit: a rise would queue the very requests whose
    // round trips are to tell whether it is.
    const held = stale ? Math.min(next, this.#limit) : next;
    this.#update(Math.max(this.#settings.minConcurrency, Math.min(this.#settings.maxLimit, held)), at);
    if (this.#fasterStreak >= STREAK) {
      this.#fasterStreak = 0;
      this.#minRttTimer = at;
    }
  }

  /** With `remeasureWhenFaster`, whether `sampledNs` is shorter than the minimum by more than `buffer`, counted. */
  #staleMinimum(sampledNs: number, minRttNs: number): boolean {
    const { remeasureWhenFaster, buffer, fixedMinRttMs } = this.#settings;
    const stale = remeasureWhenFaster && fixedMinRttMs === undefined && sampledNs * (1 + buffer) < minRttNs;
    this.#fasterStreak = stale ? this.#fasterStreak + 1 : 0;
    return stale;
  }

  /** With `capToDemand`, a rise to at most twice this interval's peak in flight (a fall is never held back). */
  #demanded(next: number): number {
    const peak = this.#peakInFlight;
    this.#peakInFlight = 0;
    // Stryker disable next-line EqualityOperator: at next === limit the cap below gives the limit too
    if (!this.#settings.capToDemand || next <= this.#limit) return next;
    return Math.max(this.#limit, Math.min(next, 2 * peak));
  }
}

/** Envoy's `applyJitter`: up to `jitter` of the interval (rounded up to a whole ms) added, in whole ms. */
function jittered(intervalMs: number, jitter: number, random: () => number): number {
  if (jitter === 0) return intervalMs;
  // Envoy takes `random() % range` of a 64-bit random number; a uniform draw in [0, range) is the same distribution.
  return intervalMs + Math.floor(random() * Math.ceil(intervalMs * jitter));
}

/** 10^0..10^21, exact: `10 ** n` is not guaranteed to be. */
const POWERS_OF_TEN = Array.from({ length: 22 }, (_, n) => Number(`1e${n}`));

/**
 * Envoy's latency histogram (circllhist): a bucket per two significant digits (10..99 × 10^e µs, so 5000 µs falls
 * in [5000, 5100)), and a percentile interpolated within the bucket that holds it, as `hist_approx_quantile` does.
 */
class LatencyHistogram {
  /** Counts by bucket, keyed `e * 100 + digits` (0 for 0 µs), which orders them as their values. */
  private readonly counts = new Map<number, number>();
  count = 0;

  add(us: number): void {
    // A whole number of µs has its bucket in integer arithmetic, which is what circllhist's floating point gives.
    const exponent = String(us).length - 1;
    const key = exponent * 100 + Math.floor((us * 10) / (POWERS_OF_TEN[exponent] as number));
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.count++;
  }

  clear(): void {
    this.counts.clear();
    this.count = 0;
  }

  /** The percentile (a fraction of 1), truncated to whole µs as Envoy does; the histogram is cleared. */
  takePercentileUs(percentile: number): number {
    const buckets = [...this.counts].sort((a, b) => a[0] - b[0]);
    const target = this.count * percentile;
    let index = 0;
    let lower = 0;
    let upper = (buckets[0] as [number, number])[1];
    // circllhist also stops at the last bucket, which this walk never passes: there `upper` is the whole count.
    // Stryker disable next-line BlockStatement: an empty body never ends the walk (see #catchUp)
    while (upper < target) {
      index++;
      lower = upper;
      upper += (buckets[index] as [number, number])[1];
    }
    const key = (buckets[index] as [number, number])[0];
    const power = POWERS_OF_TEN[Math.floor(key / 100)] as number;
    // circllhist's left edge and width, in its floating point. Its branches for a target on either edge give what
    // this gives; its zero bucket has width 0 where this one has 0.1, which truncates to the same 0 µs.
    const left = ((key % 100) / 10) * power;
    const width = power / 10;
    this.clear();
    return Math.trunc(left + ((target - lower) / (upper - lower)) * width);
  }
}
