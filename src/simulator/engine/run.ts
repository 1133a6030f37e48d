// One simulated limiter over the arrivals: its policy and lockout through evaluatePolicies, as a store evaluates them.
import { type Evaluation, evaluatePolicies, type Operation } from '../../policies/evaluate.js';
import { lockedOut, lockout } from '../../policies/lockout.js';
import { type AnyPolicy, advised, type PolicyResult } from '../../policies/policy.js';
import type { SimulatedLimiter } from './limiter-spec.js';
import type { Scenario } from './scenario.js';
import type { Release, TimelineEntry } from './summary.js';

/** The level between requests, read with a cost-0 evaluation that changes nothing (as `limiter.peek` does). */
export interface LevelSample {
  readonly timeMs: number;
  readonly level: number;
}

/** A lockout: from the denial that started it until every request may pass again. */
export interface BlockedPeriod {
  readonly fromMs: number;
  readonly untilMs: number;
}

export interface RunResult {
  readonly timeline: readonly TimelineEntry[];
  readonly levels: readonly LevelSample[];
  readonly releases: readonly Release[];
  readonly blockedPeriods: readonly BlockedPeriod[];
}

const PEEK: Operation = { action: 'peek', cost: 0 };

/**
 * Evaluates every event in time order, one client: at equal times the releases first (a request finishing frees its
 * slot for one arriving then), then the level samples, then the arrivals. The limiter's policies are its policy and,
 * with `blockMs`, `lockout(blockMs)` after it, exactly as `createLimiter` hands them to a store, and each state is
 * replaced by its write as a store does. With a concurrency policy, each admitted request takes a lease of its own
 * and gives it back when its service time ends (a refund of cost 0 naming the lease, as `decision.release()` does).
 */
export function runLimiter(
  { policy, blockMs }: SimulatedLimiter,
  { arrivals, cost, serviceMs, sampleTimes }: Scenario,
): RunResult {
  const policies: AnyPolicy[] = blockMs === undefined ? [policy] : [policy, lockout(blockMs)];
  const states: unknown[] = policies.map(() => undefined);
  const step = (nowMs: number, operation: Operation): Evaluation => {
    const evaluation = evaluatePolicies(policies, states, nowMs, operation);
    evaluation.writes.forEach(({ next }, i) => {
      if (next !== undefined) states[i] = next;
    });
    return evaluation;
  };
  // A bucket's level is the tokens left; a window's is its count (its limit minus what is left), a concurrency
  // limit's the slots held.
  const levelOf = ({ remaining }: PolicyResult) =>
    policy.level === 'tokens' ? remaining : policy.limit - remaining;
  const { leased } = policy;
  const timeline: TimelineEntry[] = [];
  const levels: LevelSample[] = [];
  const releases: Release[] = [];
  const blockedPeriods: BlockedPeriod[] = [];

  // Every request that could be admitted, by the time it would finish; a denied one is skipped when its time comes.
  const finishing = leased ? arrivals.map((_, i) => i) : [];
  const endOf = (i: number) => (arrivals[i] as number) + (serviceMs[i] as number);
  finishing.sort((a, b) => endOf(a) - endOf(b) || a - b);
  const admitted: boolean[] = [];
  let f = 0;
  let s = 0;
  /** Releases and samples up to `timeMs`, in time order. */
  const advance = (timeMs: number) => {
    for (;;) {
      const release = finishing[f];
      const releaseAt = release === undefined ? Number.POSITIVE_INFINITY : endOf(release);
      const sampleAt = sampleTimes[s] ?? Number.POSITIVE_INFINITY;
      const next = Math.min(releaseAt, sampleAt);
      if (next === Number.POSITIVE_INFINITY || next > timeMs) return;
      if (releaseAt === next) {
        f++;
        if (!admitted[release as number]) continue;
        const { writes } = step(releaseAt, { action: 'refund', cost: 0, lease: leaseOf(release as number) });
        const level = levelOf(step(releaseAt, PEEK).results[0] as PolicyResult);
        // The refund's results are the views before it: whether it wrote says whether the lease was still held.
        const leaseExpired = writes[0]?.next === undefined;
        releases.push(
          leaseExpired ? { timeMs: releaseAt, level, leaseExpired } : { timeMs: releaseAt, level },
        );
      } else {
        s++;
        levels.push({ timeMs: sampleAt, level: levelOf(step(sampleAt, PEEK).results[0] as PolicyResult) });
      }
    }
  };

  arrivals.forEach((timeMs, i) => {
    advance(timeMs);
    const lease = leased ? leaseOf(i) : '';
    const { allowed, results, writes } = step(timeMs, { action: 'consume', cost, lease });
    admitted[i] = allowed;
    const own = advised(results[0] as PolicyResult, policy);
    const block = results[1];
    const level = levelOf(own);
    if (allowed) {
      timeline.push({ timeMs, allowed, remaining: own.remaining, retryAfterMs: own.retryAfterMs, level });
      return;
    }
    // A lockout that wrote was open: this denial is the policy's, and starts the block.
    const started = writes[1]?.next !== undefined;
    if (started)
      blockedPeriods.push({ fromMs: timeMs, untilMs: timeMs + (block as PolicyResult).retryAfterMs });
    const deniedBy = block === undefined || block.allowed || started ? 'policy' : 'lockout';
    // What the client is told: the policy's own figures, or the lockout's view of them while it is locked out.
    const { remaining, retryAfterMs } =
      block === undefined || block.allowed ? own : lockedOut(own, block.retryAfterMs);
    timeline.push({ timeMs, allowed, remaining, retryAfterMs, level, deniedBy });
  });
  advance(Number.POSITIVE_INFINITY);
  return { timeline, levels, releases, blockedPeriods };
}

function leaseOf(request: number): string {
  return `request-${request + 1}`;
}
