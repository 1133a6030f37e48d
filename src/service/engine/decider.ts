// The decision engine: a rate limit request's descriptors matched to their limits, counted, and answered as the reference does.
import { configError } from '../../core/errors.js';
import { isStore, type Store } from '../../stores/store.js';
import type { LimitMatch, ServiceConfig } from '../config/types.js';
import {
  Code,
  type DescriptorStatus,
  type RateLimitRequest,
  type RateLimitResponse,
} from '../protocol/messages.js';
import { countedStatus, type Evaluated, outcomeLevel, UNLIMITED_REMAINING } from './descriptor-status.js';
import type { ServiceObserver } from './observer.js';
import { checkRequest, hitsOf } from './request-checks.js';
import { responseHeaders } from './response-headers.js';
import { type RuleCounter, ruleCounter } from './rule-counter.js';

export interface DeciderOptions {
  /** Where the limits are counted: a RedisStore shared by every instance, or a MemoryStore. */
  readonly store: Store;
  /** Where a rule whose fail mode is `'memory'` counts while `store` fails: a MemoryStore of this process. */
  readonly fallbackStore?: Store;
  /** Told each counted descriptor's outcome, and each request a fail mode answered for. */
  readonly observer?: ServiceObserver;
}

export interface Decider {
  /**
   * The answer to Envoy's `ShouldRateLimit` under `config`. Rejects with `ERR_TOLLGATE_ARGUMENT` for a malformed
   * request (INVALID_ARGUMENT), and with another error when the store failed and no fail mode answered
   * (UNAVAILABLE); an unknown domain or descriptor is simply not limited.
   */
  shouldRateLimit(config: ServiceConfig, request: RateLimitRequest): Promise<RateLimitResponse>;
}

/** Not limited: no limit matched, or another matched limit `replaces` it (OK, no `current_limit`, nothing counted). */
const NOT_LIMITED: DescriptorStatus = Object.freeze({ code: Code.OK, limitRemaining: 0 });
/** `unlimited: true`: OK, never counted, the greatest remaining. */
const UNLIMITED: DescriptorStatus = Object.freeze({ code: Code.OK, limitRemaining: UNLIMITED_REMAINING });

/**
 * A decision engine over `store`, its options checked here, once.
 *
 * @example
 * const decider = createDecider({ store: redisStore, fallbackStore: new MemoryStore() });
 * const response = await decider.shouldRateLimit(config, request);
 */
export function createDecider(options: DeciderOptions): Decider {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  if (!isStore(options.store)) throw configError('store', 'must be a Store (a RedisStore or MemoryStore)');
  const { fallbackStore, observer } = options;
  if (fallbackStore !== undefined && !isStore(fallbackStore))
    throw configError('fallbackStore', 'must be a Store (a MemoryStore)');
  const count = ruleCounter(options.store, fallbackStore);
  return {
    shouldRateLimit: async (config, request) => {
      checkRequest(request);
      const evaluated = await evaluate(config, request, count);
      if (observer !== undefined) observe(observer, evaluated);
      return respond(config, request, evaluated);
    },
  };
}

/**
 * Each limited descriptor counted on its own and at once (Promise.all), as the reference increments each key on
 * its own: a descriptor over its limit leaves the others counted, and their counters may sit in different limiters
 * and Redis slots, so no single atomic step could hold them all. A descriptor not counted gets its status at once.
 */
function evaluate(
  config: ServiceConfig,
  request: RateLimitRequest,
  count: RuleCounter,
): Promise<readonly (Evaluated | DescriptorStatus)[]> {
  const matched = request.descriptors.map((descriptor) => ({
    descriptor,
    match: config.findLimit(request.domain, descriptor),
  }));
  // Every matched limit's `replaces`, an unlimited one's included, lifts the limits it names for this request.
  const replaced = new Set(matched.flatMap(({ match }) => match?.rule.replaces ?? []));
  return Promise.all(
    matched.map(({ descriptor, match }) => {
      if (match === undefined) return NOT_LIMITED;
      const { rule } = match;
      if (rule.unlimited) return UNLIMITED;
      if (rule.name !== '' && replaced.has(rule.name)) return NOT_LIMITED;
      return counted(match, hitsOf(request, descriptor), count);
    }),
  );
}

async function counted(match: LimitMatch, hits: number, count: RuleCounter): Promise<Evaluated> {
  const { rule } = match;
  const { decision, degraded } = await count(rule, match.counterKey, hits);
  return { match, rule, hits, decision, degraded, status: countedStatus(rule, decision) };
}

function observe(observer: ServiceObserver, answers: readonly (Evaluated | DescriptorStatus)[]): void {
  let degraded = false;
  for (const answer of answers) {
    if (!('decision' in answer)) continue;
    const { match, hits, decision, rule } = answer;
    observer.descriptor({
      statsKey: match.statsKey,
      hits,
      level: outcomeLevel(decision),
      shadow: rule.shadowMode,
      fromRequest: keyFromRequest(match),
    });
    degraded ||= answer.degraded;
  }
  // Once per request, as the reference counts a failed store call.
  if (degraded) observer.storeError();
}

/**
 * Whether a descriptor's stats key holds what a client chose: a limit the request set itself (no file declared it,
 * its key is the request's entries) or a configured limit whose key takes request values (`detailed_metric`,
 * `value_to_metric`), which then differs from the limit's own key.
 */
function keyFromRequest({ rule, statsKey }: LimitMatch): boolean {
  return rule.source.file === '' || statsKey !== rule.fullKey;
}

function respond(
  config: ServiceConfig,
  request: RateLimitRequest,
  answers: readonly (Evaluated | DescriptorStatus)[],
): RateLimitResponse {
  const evaluated = answers.filter((answer): answer is Evaluated => 'decision' in answer);
  const overBy = overLimitBy(evaluated);
  const overallCode = overBy.length > 0 ? Code.OVER_LIMIT : Code.OK;
  const rawBody = overallCode === Code.OVER_LIMIT ? config.rawBodies.get(request.domain) : undefined;
  const response: RateLimitResponse = {
    overallCode,
    statuses: answers.map((answer) => ('decision' in answer ? answer.status : answer)),
    responseHeadersToAdd: responseHeaders(evaluated, overBy),
    requestHeadersToAdd: [],
  };
  return rawBody === undefined ? response : { ...response, rawBody };
}

/**
 * The descriptors that make the request OVER_LIMIT. A shadow-mode descriptor never does. Quota-mode descriptors
 * do only together: when every one of them is over (a quota passed on one of them still lets the request through),
 * as the reference decides; any other descriptor over its limit does alone.
 */
function overLimitBy(evaluated: readonly Evaluated[]): readonly Evaluated[] {
  const over = evaluated.filter((e) => e.status.code === Code.OVER_LIMIT);
  const quota = evaluated.filter((e) => e.rule.quotaMode);
  const quotaOver = quota.length > 0 && quota.every((e) => e.status.code === Code.OVER_LIMIT);
  return quotaOver ? over : over.filter((e) => !e.rule.quotaMode);
}
