// Concurrency leases: a name for each slot taken, unique across processes, and a release that runs once.
import { randomBytes } from 'node:crypto';

/** Random per process, so that two processes sharing a store never name a lease alike. */
const PROCESS = randomBytes(9).toString('base64url');
let taken = 0;

/** A new lease name: short, since Redis keeps it as a member of the identifier's sorted set while it is held. */
export function leaseName(): string {
  taken++;
  return `${PROCESS}.${taken.toString(36)}`;
}

/** `release` made safe to call again: the first call frees the slot, and every call answers with its promise. */
export function once<Args extends unknown[]>(
  release: (...args: Args) => Promise<void>,
): (...args: Args) => Promise<void> {
  let released: Promise<void> | undefined;
  return (...args) => {
    released ??= release(...args);
    return released;
  };
}
