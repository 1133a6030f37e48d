// A store's retention cap held against what each policy needs: refused at wire-up, so time alone never mints quota.
import { configError } from '../../core/errors.js';
import type { AnyPolicy } from '../../policies/policy.js';

/**
 * Throws when `cap` (in the option's own unit) would drop a bucket of one of `policies` before it is at rest. A
 * dropped bucket reads as a fresh client: a spent daily quota forgotten after an hour is a quota handed out again.
 */
export function checkRetentionCap(
  option: string,
  cap: number | undefined,
  unit: { readonly ms: number; readonly name: string },
  policies: readonly AnyPolicy[],
): void {
  if (cap === undefined) return;
  for (const { name, kind, retentionMs } of policies) {
    if (retentionMs < 0) {
      throw configError(
        option,
        `cannot be set while policy "${name}" (a ${kind} that never refills) must keep its state for ever; unset it`,
        cap,
      );
    }
    const needed = Math.ceil(retentionMs / unit.ms);
    if (needed > cap) {
      throw configError(
        option,
        `must be at least ${needed} (${unit.name}) for policy "${name}", whose buckets take that long to come to rest`,
        cap,
      );
    }
  }
}

/**
 * Until when a state written at `nowMs` is kept: until at rest (`ttlMs`, -1 for never) and never sooner, since a
 * bucket dropped early reads as a fresh client's, within `capMs` (a retention cap checked as above).
 */
export function keptUntil(nowMs: number, ttlMs: number, capMs: number | undefined): number {
  return nowMs + Math.min(ttlMs < 0 ? Number.POSITIVE_INFINITY : ttlMs, capMs ?? Number.POSITIVE_INFINITY);
}
