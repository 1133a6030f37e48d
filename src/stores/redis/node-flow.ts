// The calls each cluster node has in flight, and whether a node's next batch waits for one of them to end.

/**
 * Calls in flight to one node before its next batch waits for one of them, and the fewest decisions a batch
 * carries to go while another call to its node is in flight. A batch that waits takes in what is asked for
 * meanwhile, and a fuller call costs the node less per decision; two calls in flight keep the node busy while the
 * answers of one travel back (docs/cluster.md has the figures).
 */
const DEPTH = 2;
const FULL_ENOUGH = 8;

export class NodeFlow {
  readonly #calls = new Map<string, number>();
  /** Calls to each node that have ended, ever: a batch that waits goes once one more has. */
  readonly #ended = new Map<string, number>();

  /**
   * Whether a batch of `size` decisions for the node `shard` waits for one of its calls in flight. A batch that
   * waited already (`since`, the node's ended calls when it began) waits only until one of them ends, whatever the
   * calls in flight then: full batches, which go at once, could otherwise keep it waiting as long as they come.
   */
  waits(shard: string, size: number, since?: number): boolean {
    if (since !== undefined) return this.endedCalls(shard) === since;
    const calls = this.#calls.get(shard) ?? 0;
    return calls >= DEPTH || (calls > 0 && size < FULL_ENOUGH);
  }

  endedCalls(shard: string): number {
    return this.#ended.get(shard) ?? 0;
  }

  began(shard: string): void {
    this.#calls.set(shard, (this.#calls.get(shard) ?? 0) + 1);
  }

  ended(shard: string): void {
    const calls = (this.#calls.get(shard) ?? 1) - 1;
    if (calls > 0) this.#calls.set(shard, calls);
    else this.#calls.delete(shard);
    this.#ended.set(shard, this.endedCalls(shard) + 1);
  }
}
