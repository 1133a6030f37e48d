// The decision engine on a MemoryStore with an injected clock.
import { describe } from 'node:test';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { countingScenarios } from './counting-scenarios.js';
import type { StoreMaker } from './engine-harness.js';
import { modeScenarios } from './mode-scenarios.js';

describe('the decision engine on a MemoryStore', () => {
  const makeStore: StoreMaker = async (clock) => {
    const store = new MemoryStore({ clock, autoCleanup: false });
    return { store, close: async () => store.close() };
  };
  countingScenarios(makeStore);
  modeScenarios(makeStore);
});
