// A limiter's operations beyond a consume or a peek: refunds, waits, blocks and resets, each over its resolved options.

import type { Duration } from '../core/duration.js';
import { configError } from '../core/errors.js';
import type { Decision } from '../decision/decision.js';
import { bucketKey, bucketKeys, encodeIdentifier, memberOf } from '../stores/key.js';
import { requestedBlock } from './checks.js';
import { decide } from './decide.js';
import { type RefundChange, type RefundOptions, refundOf } from './refund-spend.js';
import type { ResolvedLimiter } from './resolve-options.js';
import { change } from './store-request.js';
import { type WaitOptions, waitFor } from './wait.js';

/** A refund checked against the spend it names; a refund the store did not apply may be asked for again. */
export async function refund(
  limiter: ResolvedLimiter,
  identifier: string,
  options: RefundOptions | undefined,
): Promise<void> {
  const { undo, ...asked }: RefundChange = refundOf(limiter, identifier, options, limiter.defaultCost);
  try {
    await change(limiter, identifier, 'refund', asked);
  } catch (error) {
    undo?.();
    throw error;
  }
}

export async function wait(
  limiter: ResolvedLimiter,
  identifier: string,
  options: WaitOptions | undefined,
): Promise<Decision> {
  const cost = options?.cost ?? limiter.defaultCost;
  return waitFor(
    {
      // The engine books only policies that can be booked; the others answer as a consume that starts no lockout.
      attempt: (maxDelayMs) => decide(limiter, identifier, 'consume', cost, { maxDelayMs, waiting: true }),
      giveBack: async (decision) => {
        await Promise.all([
          refund(limiter, identifier, { spent: decision }),
          // Stryker disable next-line OptionalChaining: without a slot the refund is already sent when the call throws, and wait swallows it
          decision.release?.(),
        ]);
      },
      line: limiter.line,
      identifier,
    },
    options,
  );
}

export async function block(limiter: ResolvedLimiter, identifier: string, ms: Duration): Promise<void> {
  if (limiter.blockMs === undefined)
    throw configError('blockMs', 'must be set for block() (0 checks blocks without starting any)');
  await change(limiter, identifier, 'block', { units: requestedBlock(ms, limiter.store.retentionCap) });
}

export async function unblock(limiter: ResolvedLimiter, identifier: string): Promise<void> {
  if (limiter.blockMs === undefined)
    throw configError('blockMs', 'must be set for unblock() (0 checks blocks without starting any)');
  const { scope, enforced } = limiter;
  const key = bucketKey(scope, encodeIdentifier(identifier), memberOf(enforced, enforced.length - 1));
  await limiter.store.reset([key]);
}

export async function reset(limiter: ResolvedLimiter, identifier: string): Promise<void> {
  await limiter.store.reset(bucketKeys(limiter.scope, identifier, limiter.enforced));
}
