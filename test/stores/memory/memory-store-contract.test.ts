// The store contract on MemoryStore.
import { MemoryStore } from '../../../src/index.js';
import { runStoreContract } from '../../contract/store-contract.js';

runStoreContract('MemoryStore', async (clock) => {
  const store = new MemoryStore({ clock, autoCleanup: false });
  return { store, close: async () => store.close() };
});
