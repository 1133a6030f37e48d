// What the batcher hands back: each decision of a call to exactly one outcome, and the decisions Redis did not make.
import type { TraceContext } from '../../core/trace.js';
import type { StoreResponse } from '../store.js';
import type { CallDecision } from './engine/call-format.js';

/** One decision waiting for its script call. */
export interface Pending extends CallDecision {
  /** The store call's trace, when someone listens: told the size of the batch it went in. */
  readonly trace: TraceContext | undefined;
  /** The node that owned `firstKey` when the decision was asked for ('' when not known). */
  readonly shard: string;
  readonly resolve: (response: StoreResponse) => void;
}

/** Decisions of one script call that Redis did not make, and why. */
export interface FailedCall {
  readonly shard: string;
  /** A key of the call's first decision, on the node that failed it: what a probe of that node writes beside. */
  readonly probeKey: string;
  readonly decisions: readonly Pending[];
  /** The call's error, or the last of its decisions' errors. */
  readonly error: unknown;
}

/** Where each call's outcome goes: every decision it carried is handed to exactly one of these. */
export interface BatchOutcome {
  /** Redis made this decision. */
  decided(pending: Pending, response: StoreResponse): void;
  /** Every decision of a call to `shard` was made: one success for its node. */
  succeeded(shard: string): void;
  /** Some or all decisions of a call were not made: one failure for its node, whatever their number. */
  failed(call: FailedCall): void;
}
