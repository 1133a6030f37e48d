// When a request that went on is over: free its concurrency slot, and give back what it spent if the options say so.
import type { Decision } from './decision.js';
import { configError } from './errors.js';
import type { Limiter } from './limiter.js';
import type { Logger } from './logger.js';
import { isFailMode } from './stores/store.js';
import { optionalFunction } from './validate.js';

/** The options that give a request's units back once its outcome is known; `Res` is the framework's response. */
export interface RefundOptions<Req, Res> {
  /** Refund a request whose response failed: status >= 400, or a client that left before it was sent. */
  readonly skipFailedRequests?: boolean;
  /** Refund a request whose response succeeded: status < 400. */
  readonly skipSuccessfulRequests?: boolean;
  /**
   * Tells success instead of the status, once the response is sent (not for a client that left: that failed).
   * May be async; an error it throws is logged and counts as failed.
   */
  readonly requestWasSuccessful?: (req: Req, res: Res) => boolean | Promise<boolean>;
}

/** Which finished requests are given back, and how success is told. */
export interface Refunds<Req, Res> {
  /** True: refund the requests that succeeded; false: those that failed. */
  readonly succeeded: boolean;
  readonly wasSuccessful: ((req: Req, res: Res) => boolean | Promise<boolean>) | undefined;
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
 * What an adapter calls once an admitted request is over: when its response has been sent, with the final status
 * and the framework's response; when the connection closed first (or no response came), with undefined. Only the
 * first call acts, so an adapter may call it from both events; it never throws.
 */
export type Complete<Res> = (status: number | undefined, res: Res) => void;

/** The refund options, checked at wire-up; undefined when no request is ever refunded. */
export function resolveRefunds<Req, Res>(options: RefundOptions<Req, Res>): Refunds<Req, Res> | undefined {
  const failed = flag('skipFailedRequests', options.skipFailedRequests);
  const succeeded = flag('skipSuccessfulRequests', options.skipSuccessfulRequests);
  const wasSuccessful = optionalFunction('requestWasSuccessful', options.requestWasSuccessful);
  // Refunding every request would leave the limit counting only the requests in flight: concurrency() says that.
  if (failed && succeeded)
    throw configError(
      'skipSuccessfulRequests',
      'cannot be combined with `skipFailedRequests`: together they refund every request (to limit requests ' +
        'in flight, use the concurrency() policy)',
    );
  if (failed || succeeded) return { succeeded, wasSuccessful };
  if (wasSuccessful !== undefined)
    throw configError('requestWasSuccessful', 'needs `skipFailedRequests` or `skipSuccessfulRequests`');
  return undefined;
}

function flag(option: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    throw configError(option, 'must be a boolean', value);
  return value ?? false;
}

/**
 * What to do once an admitted request is over, or undefined when there is nothing to do: no slot held, nothing to
 * refund. The function acts on its first call only, never throws, and logs what fails.
 */
export function completion<Req, Res>(
  spent: Spent<Req>,
  refunds: Refunds<Req, Res> | undefined,
  logger: Logger,
): Complete<Res> | undefined {
  const { decision } = spent;
  // A fail mode's answer holds nothing (the store recorded neither a slot nor a spend), and asking the store
  // again while it is down would fail once per request.
  if (!decision.allowed || isFailMode(decision.degraded)) return undefined;
  const { release } = decision;
  const refund = spent.cost > 0 ? refunds : undefined;
  if (release === undefined && refund === undefined) return undefined;
  let completed = false;
  return (status, res) => {
    // Both the end of the response and the close of its connection call this; the first one counts.
    if (completed) return;
    completed = true;
    if (release !== undefined)
      contain(
        release,
        logger,
        '[tollgate] releasing the concurrency slot failed; it frees when its lease expires',
      );
    if (refund !== undefined)
      contain(
        () => refundIfDue(spent, refund, status, res, logger),
        logger,
        '[tollgate] refunding the request failed; it stays counted',
      );
  };
}

async function refundIfDue<Req, Res>(
  { limiter, identity, cost, req, decision }: Spent<Req>,
  { succeeded, wasSuccessful }: Refunds<Req, Res>,
  status: number | undefined,
  res: Res,
  logger: Logger,
): Promise<void> {
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

/** The parts of a node:http response (Fastify's injected ones included) that tell when it is over. */
export interface NodeResponse {
  readonly statusCode: number;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/**
 * Calls `ended` with the final status once `res` has handed its whole response to the connection, or with
 * undefined once the connection closed first (the client left mid-response), also when either happened before
 * this was called. Both events come on a normal end: `ended` must act only on its first call.
 */
export function whenSent(res: NodeResponse, ended: (status: number | undefined) => void): void {
  if (res.writableFinished) ended(res.statusCode);
  else if (res.destroyed) ended(undefined);
  else {
    res.once('finish', () => ended(res.statusCode));
    res.once('close', () => ended(res.writableFinished ? res.statusCode : undefined));
  }
}

/** A node:http response, as @hono/node-server hands it over in `c.env.outgoing`. */
export function isNodeResponse(value: unknown): value is NodeResponse {
  const res = value as Partial<NodeResponse> | undefined;
  return typeof res?.once === 'function' && typeof res.writableFinished === 'boolean';
}
