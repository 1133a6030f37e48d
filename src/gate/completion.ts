// When a request that went on is over: free its concurrency slot, and give back what it spent if the options say so.

import type { Logger } from '../core/logger.js';
import type { Decision } from '../decision/decision.js';
import type { Limiter } from '../limiter/limiter.js';
import { isFailMode } from '../stores/store.js';

/** The options that give a request's units back once its outcome is known; `Res` is the framework's response. */
export interface ResponseRefundOptions<Req, Res> {
  /**
   * Refund a request whose response failed: status >= 400, or no response at all. A client that left before the
   * response was sent is counted, not refunded, unless `abortedRequestsFail` says otherwise.
   */
  readonly skipFailedRequests?: boolean;
  /** Refund a request whose response succeeded: status < 400. A client that left first is counted. */
  readonly skipSuccessfulRequests?: boolean;
  /**
   * Tells success instead of the status, once the response is sent (not for a client that left first).
   * May be async; an error it throws is logged and counts as failed.
   */
  readonly requestWasSuccessful?: (req: Req, res: Res) => boolean | Promise<boolean>;
  /**
   * With `skipFailedRequests`: a request whose client left before the response was sent counts as failed, and
   * is refunded as the client leaves. Default false: it is counted, so a client cannot go uncounted by
   * aborting every request.
   */
  readonly abortedRequestsFail?: boolean;
}

/** Which finished requests are given back, and how success is told. */
export interface Refunds<Req, Res> {
  /** True: refund the requests that succeeded; false: those that failed. */
  readonly succeeded: boolean;
  readonly wasSuccessful: ((req: Req, res: Res) => boolean | Promise<boolean>) | undefined;
  /** A client that left before the response was sent failed (true), or is counted under either skip option. */
  readonly abortsFail: boolean;
}

/** What an admitted request spent, and from which limiter (with tiers, the tier's). */
export interface Spent<Req> {
  readonly decision: Decision;
  readonly limiter: Limiter;
  readonly identity: string;
  readonly cost: number;
  readonly req: Req;
}

/**
 * What an adapter tells the gate of an admitted request that holds something (a concurrency slot, a refund to
 * decide). Each part acts on its first call only, and never throws.
 */
export interface Complete<Res> {
  /**
   * The request is over: its response was sent, with its final status, or it never will be (undefined) and the
   * handler is done with it. Frees the slot, and decides the refund unless `left` did.
   */
  (status: number | undefined, res: Res): void;
  /**
   * The client left before the response was sent: decides the refund now, as a client's abort. The slot stays
   * held until the request is over, since the handler's work goes on.
   */
  readonly left: (res: Res) => void;
}

/** `left` where there is no refund to decide: the slot waits for the request's end either way. */
const nothingToDecide = () => {};

/**
 * What to do once an admitted request is over, or undefined when there is nothing to do: no slot held, nothing to
 * refund. Each part acts on its first call only, never throws, and logs what fails.
 */
export function completion<Req, Res>(
  spent: Spent<Req>,
  refunds: Refunds<Req, Res> | undefined,
  logger: Logger,
): Complete<Res> | undefined {
  const { decision } = spent;
  if (!decision.allowed) return undefined;
  // A fail mode's answer holds nothing in the store (neither a slot nor a spend), and asking the store again while
  // it is down would fail once per request; a local policy's slot (an adaptive limit's) is held all the same.
  const { release } = decision;
  const refund = spent.cost > 0 && !isFailMode(decision.degraded) ? refunds : undefined;
  if (release === undefined && refund === undefined) return undefined;
  let decided = false;
  let over = false;
  const decide = (status: number | undefined, res: Res, aborted: boolean) => {
    if (decided || refund === undefined) return;
    decided = true;
    contain(
      () => refundIfDue(spent, refund, { status, res, aborted }, logger),
      logger,
      '[tollgate] refunding the request failed; it stays counted',
    );
  };
  const complete = (status: number | undefined, res: Res) => {
    // The end of the response and the close of its connection may both report it; the first one counts.
    if (over) return;
    over = true;
    if (release !== undefined)
      contain(
        () => release(status === undefined ? undefined : { status }),
        logger,
        '[tollgate] releasing the concurrency slot failed; it frees when its lease expires',
      );
    decide(status, res, false);
  };
  const left =
    refund === undefined
      ? nothingToDecide
      : (res: Res) => {
          if (!over) decide(undefined, res, true);
        };
  return Object.assign(complete, { left });
}

/** How a request ended: its response's status (undefined: none was sent), or its client left first. */
interface Ending<Res> {
  readonly status: number | undefined;
  readonly res: Res;
  readonly aborted: boolean;
}

async function refundIfDue<Req, Res>(
  { limiter, identity, cost, req, decision }: Spent<Req>,
  { succeeded, wasSuccessful, abortsFail }: Refunds<Req, Res>,
  { status, res, aborted }: Ending<Res>,
  logger: Logger,
): Promise<void> {
  // A client's own abort says nothing of how its request went: it counts, unless the options call it a failure.
  if (aborted && !abortsFail) return;
  let success = false;
  if (status !== undefined && wasSuccessful === undefined) success = status < 400;
  else if (status !== undefined && wasSuccessful !== undefined) {
    try {
      success = Boolean(await wasSuccessful(req, res));
    } catch (error) {
      log(logger, error, '[tollgate] requestWasSuccessful threw; the request counts as failed');
    }
  }
  // Named by the admission that spent them, the units go back only where they still count: a response that outlived
  // its window gives nothing to the client's next one, nor a bucket the tokens its refill has given back.
  if (success === succeeded) await limiter.refund(identity, { cost, spent: decision });
}

/** Runs `task` in the background: what it throws or rejects with is logged, never left unhandled. */
function contain(task: () => Promise<void>, logger: Logger, message: string): void {
  (async () => task())().catch((error: unknown) => log(logger, error, message));
}

/** Error first, as the gate logs everything; a logger that throws has nowhere left to report to. */
function log(logger: Logger, error: unknown, message: string): void {
  try {
    logger.error(error, message);
  } catch {}
}
