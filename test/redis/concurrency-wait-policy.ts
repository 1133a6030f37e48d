// The limit both processes of the concurrency wait test share: one slot, held for up to 20 s.
import { concurrency } from '../../src/index.js';

export const WAIT_SCOPE = 'waiting';
export const LEASE_MS = 20_000;
export const waitPolicy = () => concurrency({ max: 1, leaseMs: LEASE_MS });
