// The default store: the one MemoryStore every limiter created without a store shares.
import { processGlobal } from '../../core/process-global.js';
import { MemoryStore } from './memory-store.js';

/**
 * The store limiters share when given none: one map and one sweep timer however many limiters exist, and one per
 * process even when the app loads both the ES module and the CommonJS build, so that their limiters count together.
 */
export function sharedMemoryStore(): MemoryStore {
  return processGlobal('sharedMemoryStore', () => new MemoryStore());
}
