// The default store: the one MemoryStore every limiter created without a store shares.
import { MemoryStore } from './memory-store.js';

let shared: MemoryStore | undefined;

/** The store limiters share when given none: one map and one sweep timer however many limiters exist. */
export function sharedMemoryStore(): MemoryStore {
  shared ??= new MemoryStore();
  return shared;
}
