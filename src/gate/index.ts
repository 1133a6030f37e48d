// `tollgate/gate`: what the author of an adapter for another framework needs: the framework-free gate, its outcome,
// and when a request served on a node:http response is over.

export type { Complete } from './completion.js';
export { createGate, type Gate, type GateOutcome } from './gate.js';
export type { GateOptions } from './options.js';
export { type NodeResponse, whenOver } from './response.js';
