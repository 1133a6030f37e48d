// The slot both processes of the waiting section share: one per identifier, under one scope.
import { concurrency } from '../src/index.js';

export const HOLDER_SCOPE = 'bench-pickup';
export const heldSlot = () => concurrency({ max: 1, leaseMs: 60_000 });
