// An adaptive limit's partitions: each a guaranteed share of the limit, lent to the others while it is idle.
import { configError } from '../core/errors.js';
import { NAME } from '../policies/policy.js';

/** One partition's counts: what it holds now, and what it has completed, been refused and dropped since it began. */
export interface Partition {
  readonly name: string;
  /** Its share of the limit, 0 for requests of no partition (or of one not configured): they only borrow. */
  readonly share: number;
  inFlight: number;
  /** Requests that held a slot to their release (a slot given back unused, as the store denied, is not one). */
  completed: number;
  rejected: number;
  dropped: number;
  /** When it last asked for a slot, on the limit's clock: a partition asked of within `ACTIVE_MS` keeps its share. */
  seenAt: number;
}

/**
 * How long an idle partition's guarantee is kept free after its last request. Past it, the others may borrow its
 * share: a partition that has gone quiet does not keep capacity from those still asking.
 */
export const ACTIVE_MS = 1000;

/** The partition of requests that name none (or one not configured). */
export const UNNAMED = '';

/** The partitions of `shares` (each above 0, all together at most 1), and the unnamed one. */
export function partitionsOf(shares: Readonly<Record<string, number>> | undefined): Map<string, Partition> {
  const partitions = new Map<string, Partition>();
  if (shares !== undefined && (typeof shares !== 'object' || shares === null || Array.isArray(shares)))
    throw configError(
      'partitions',
      'must be an object of partition names to shares, such as { live: 0.9, batch: 0.1 }',
      shares,
    );
  let total = 0;
  for (const [name, share] of Object.entries(shares ?? {})) {
    if (!NAME.test(name))
      throw configError(
        'partitions',
        `names must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-" (received "${name}")`,
      );
    if (typeof share !== 'number' || !(share > 0 && share <= 1))
      throw configError(`partitions.${name}`, 'must be a share above 0 and at most 1', share);
    total += share;
    partitions.set(name, counts(name, share));
  }
  // A small tolerance: shares such as 0.7 + 0.2 + 0.1 add up to a hair over 1 in binary.
  if (total > 1 + 1e-9)
    throw configError(
      'partitions',
      `shares must add up to at most 1 (they add up to ${Number(total.toPrecision(12))})`,
    );
  partitions.set(UNNAMED, counts(UNNAMED, 0));
  return partitions;
}

function counts(name: string, share: number): Partition {
  return {
    name,
    share,
    inFlight: 0,
    completed: 0,
    rejected: 0,
    dropped: 0,
    seenAt: Number.NEGATIVE_INFINITY,
  };
}

/**
 * A partition's guarantee at `limit`: its share, rounded down so that the guarantees never add up to more than the
 * limit (a small limit may so guarantee a small share nothing).
 */
export function guaranteed(partition: Partition, limit: number): number {
  return Math.floor(limit * partition.share);
}

/**
 * Whether `partition` may take a slot: never past the limit in all, and beyond its own guarantee only from what
 * the other partitions' unused guarantees leave free, for those asked of within `ACTIVE_MS`.
 */
export function mayAdmit(
  partition: Partition,
  partitions: Map<string, Partition>,
  limit: number,
  total: number,
  nowMs: number,
): boolean {
  if (total >= limit) return false;
  if (partition.inFlight < guaranteed(partition, limit)) return true;
  let reserved = 0;
  for (const other of partitions.values()) {
    if (other === partition || (other.inFlight === 0 && nowMs - other.seenAt >= ACTIVE_MS)) continue;
    reserved += Math.max(0, guaranteed(other, limit) - other.inFlight);
  }
  return limit - total > reserved;
}
