// `npm start`: the demo on the in-memory store.
import { MemoryStore } from '../src/stores/memory/memory-store.js';
import { runDemo } from './run-demo.js';

await runDemo({ store: new MemoryStore() });
