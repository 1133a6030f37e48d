// The discrete-event loop: one scenario's arrivals through one limit into the simulated service, on a virtual clock.

import { mulberry32 } from '../../core/seeded-random.js';
import type { LocalSlot } from '../../policies/local-policy.js';
import { type AdaptiveConcurrency, adaptiveConcurrency } from '../adaptive-concurrency.js';
import type { Clock, LimitAlgorithm, Random } from '../algorithms/algorithm.js';
import { CompletionHeap } from './completion-heap.js';
import { type Job, Service, type ServiceModel } from './service-model.js';
import { type PhaseTally, type Series, SeriesRecorder, tallies } from './tally.js';
import { type Arrivals, arrivals, type Phase, phaseStarts } from './traffic.js';

/** A limit to compare: its algorithm, made afresh for each run on the run's clock and a seeded random. */
export interface Contender {
  readonly label: string;
  readonly algorithm: (run: { readonly clock: Clock; readonly random: Random }) => LimitAlgorithm;
}

/** Traffic against a service, phase by phase. */
export interface Scenario {
  readonly name: string;
  readonly title: string;
  readonly service: ServiceModel;
  readonly phases: readonly Phase[];
  /** A phase back in the first phase's conditions, where the limit should return to where it settled then. */
  readonly recoveryPhase?: number;
  readonly seed: number;
}

/** What one contender did in one scenario: counts and latencies phase by phase, and the series over time. */
export interface RawRun {
  readonly tallies: readonly PhaseTally[];
  readonly series: Series;
}

/** An admitted request: a job for the service, and the slot its answer or its timeout releases. */
interface Request extends Job {
  readonly arrivedMs: number;
  readonly slot: LocalSlot;
  /** Answered or given up on: its slot is released. */
  ended: boolean;
}

/** How often the limit, the requests in flight and the latencies are sampled for the series. */
const SAMPLE_EVERY_MS = 200;

/** The arrivals of a scenario, drawn once and shared by every contender so that they meet the same traffic. */
export function scenarioArrivals(scenario: Scenario): Arrivals {
  return arrivals(scenario.phases, scenario.service, scenario.seed);
}

/**
 * Runs `contender` through `scenario` until its last phase ends. Events at the same ms run in this order: a sample
 * of the series, a service completion, a timeout, an arrival; so a request answered exactly at its timeout counts
 * as answered.
 */
export function runContender(scenario: Scenario, contender: Contender, traffic: Arrivals): RawRun {
  return new Run(scenario, contender, traffic).run();
}

class Run {
  #now = 0;
  readonly #scenario: Scenario;
  readonly #traffic: Arrivals;
  readonly #policy: AdaptiveConcurrency;
  readonly #starts: number[];
  readonly #service: Service<Request>;
  readonly #ends = new CompletionHeap<Request>();
  /** Admitted requests in admission order, which is their timeouts' order too. */
  readonly #deadlines: Request[] = [];
  #deadlineHead = 0;
  readonly #tallies: PhaseTally[];
  readonly #series = new SeriesRecorder();

  constructor(scenario: Scenario, contender: Contender, traffic: Arrivals) {
    const clock = () => this.#now;
    this.#scenario = scenario;
    this.#traffic = traffic;
    this.#policy = adaptiveConcurrency({
      algorithm: contender.algorithm({ clock, random: mulberry32(scenario.seed ^ 0x2545f491) }),
      clock,
    });
    this.#starts = phaseStarts(scenario.phases);
    this.#service = new Service(scenario.service.workers);
    this.#tallies = tallies(scenario.phases.length);
  }

  run(): RawRun {
    const endMs = this.#starts.at(-1) as number;
    const { atMs } = this.#traffic;
    let nextArrival = 0;
    let nextSample = 0;
    for (;;) {
      const timeoutAt = this.#nextTimeout();
      const arrivalAt = atMs[nextArrival] ?? Number.POSITIVE_INFINITY;
      const completionAt = this.#ends.nextAt;
      this.#now = Math.min(nextSample, completionAt, timeoutAt, arrivalAt);
      // What is still in flight at the end is left there: it belongs to no phase.
      if (this.#now > endMs) break;
      if (this.#now === nextSample) {
        this.#sample();
        nextSample += SAMPLE_EVERY_MS;
      } else if (this.#now === completionAt) this.#complete(this.#ends.pop());
      else if (this.#now === timeoutAt) this.#timeOut(this.#deadlines[this.#deadlineHead++] as Request);
      else this.#arrive(nextArrival++);
    }
    return { tallies: this.#tallies, series: this.#series.series };
  }

  /** When the oldest request still waiting for its answer times out. */
  #nextTimeout(): number {
    const deadlines = this.#deadlines;
    while (this.#deadlineHead < deadlines.length && (deadlines[this.#deadlineHead] as Request).ended)
      this.#deadlineHead++;
    const oldest = deadlines[this.#deadlineHead];
    return oldest === undefined
      ? Number.POSITIVE_INFINITY
      : oldest.arrivedMs + this.#scenario.service.timeoutMs;
  }

  /** The phase now is in (the last one at its very end). */
  #phase(): number {
    const starts = this.#starts;
    let phase = 0;
    while (phase < starts.length - 2 && this.#now >= (starts[phase + 1] as number)) phase++;
    return phase;
  }

  #tally(): PhaseTally {
    return this.#tallies[this.#phase()] as PhaseTally;
  }

  #sample(): void {
    const { limit, inFlight } = this.#policy;
    this.#series.sample(this.#now, limit, inFlight, this.#service.queued);
  }

  #arrive(index: number): void {
    const tally = this.#tally();
    tally.arrivals++;
    // Refused requests are not retried: the clients go elsewhere, or fail.
    const { slot } = this.#policy.admit(undefined);
    if (slot === undefined) {
      tally.rejected++;
      return;
    }
    const workMs = this.#traffic.workMs[index] as number;
    const request: Request = { arrivedMs: this.#now, slot, workMs, abandoned: false, ended: false };
    this.#deadlines.push(request);
    if (this.#service.enter(request)) this.#start(request);
  }

  /** A worker takes `request`: its work is stretched by the slowdown of the phase it starts in. */
  #start(request: Request): void {
    const slowdown = this.#scenario.phases[this.#phase()]?.slowdown ?? 1;
    this.#ends.push(this.#now + request.workMs * slowdown, request);
  }

  #complete(request: Request): void {
    const next = this.#service.finish();
    if (next !== undefined) this.#start(next);
    // A request given up on still held its worker until now; its client has gone.
    if (request.ended) return;
    request.ended = true;
    request.slot.release({ dropped: false });
    const latency = this.#now - request.arrivedMs;
    this.#tally().latenciesMs.push(latency);
    this.#series.complete(latency);
  }

  #timeOut(request: Request): void {
    request.ended = true;
    request.abandoned = true;
    request.slot.release({ dropped: true });
    this.#tally().timedOut++;
  }
}
