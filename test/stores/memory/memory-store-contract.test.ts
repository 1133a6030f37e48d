// The store contract on MemoryStore.
import { MemoryStore } from '../../../src/index.js';
import { runStoreContract } from '../../../src/testing/index.js';

runStoreContract('MemoryStore', async (clock) => {
  const store = new MemoryStore({ clock, autoCleanup: false });
  return { store, close: async () => store.close() };
});
