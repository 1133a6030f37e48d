// `npm start`: the demo on the in-memory store.
import { MemoryStore } from '../stores/memory-store.js';
import { createDemoApp } from './demo-app.js';
import { serve } from './serve.js';

const store = new MemoryStore();
await serve(createDemoApp({ store, serverId: process.env.SERVER_ID ?? 'primary' }), {
  port: Number(process.env.PORT ?? 3000),
  onClose: () => store.close(),
});
