// The rate-limited sample routes the page's live mode sends real requests to, written once for every server that offers them.
import type { Duration } from '../../core/duration.js';
import { createLimiter, type Limiter } from '../../limiter/limiter.js';
import { concurrency } from '../../policies/concurrency.js';
import { fixedWindow } from '../../policies/fixed-window.js';
import type { AnyPolicy } from '../../policies/policy.js';
import { slidingWindow } from '../../policies/sliding-window.js';
import { tokenBucket } from '../../policies/token-bucket.js';
import type { Store } from '../../stores/store.js';

export interface LiveRoute {
  /** A GET route answering `{ ok: true, ... }` when its limiter lets the request through. */
  readonly path: string;
  /** Its limiter's scope, which names its buckets in a store (and in admin routes and metrics). */
  readonly scope: string;
  readonly policy: AnyPolicy;
  /** The limiter's lockout (`createLimiter`'s `blockMs`), when it has one. */
  readonly blockMs?: Duration;
  /** How long the route works before it answers, so that requests overlap (0 when absent): a slow endpoint. */
  readonly holdMs?: number;
  /** The limit in words, as the page's menu offers the route. */
  readonly label: string;
}

/** In the page's menu order: the three algorithms side by side at 5 per 10 s first, then other shapes of limit. */
export const LIVE_ROUTES: readonly LiveRoute[] = [
  {
    path: '/api/fixed-test',
    scope: 'fixed',
    policy: fixedWindow({ limit: 5, windowMs: '10s' }),
    label: 'fixed window, 5 per 10 s',
  },
  {
    path: '/api/sliding-test',
    scope: 'sliding',
    policy: slidingWindow({ limit: 5, windowMs: '10s' }),
    label: 'sliding window, 5 per 10 s',
  },
  {
    path: '/api/token-bucket-test',
    scope: 'token',
    policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }),
    label: 'bucket of 5, 1 per s',
  },
  {
    // The same bucket as above, with a lockout: once it denies, even its refilled tokens wait out the block.
    path: '/api/lockout-test',
    scope: 'lockout',
    policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }),
    blockMs: '15s',
    label: 'bucket of 5, 1 per s, locked out 15 s after a 429',
  },
  {
    // Each request takes 1.5 s, so a few a second overlap; the lease frees a slot whose release never comes.
    path: '/api/concurrency-test',
    scope: 'concurrency',
    policy: concurrency({ max: 2, leaseMs: '10s' }),
    holdMs: 1500,
    label: 'at most 2 in flight, each taking 1.5 s',
  },
  {
    // A burst of 5, refilling one token every two seconds.
    path: '/api/sensitive-action',
    scope: 'sensitive',
    policy: tokenBucket({ capacity: 5, refillPerSecond: 0.5 }),
    label: 'bucket of 5, 1 per 2 s',
  },
  {
    path: '/api/data',
    scope: 'data',
    policy: tokenBucket({ capacity: 10, refillPerSecond: 1 }),
    label: 'bucket of 10, 1 per s',
  },
  {
    path: '/api/expensive',
    scope: 'expensive',
    policy: tokenBucket({ requestsPerMinute: 5 }),
    label: '5 per minute',
  },
];

/** The route's limiter on `store`: its policy, scope and lockout, as every server offering the route builds it. */
export function liveLimiter(route: LiveRoute, store: Store): Limiter {
  const { policy, scope, blockMs } = route;
  return createLimiter({ policy, scope, store, ...(blockMs === undefined ? {} : { blockMs }) });
}
