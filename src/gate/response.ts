// When a request served on a node:http response is over: sent, or its client gone and the handler done with it.
import type { Complete } from './completion.js';

/** The parts of a node:http response (Fastify's injected ones included) that tell when a request is over. */
export interface NodeResponse {
  readonly statusCode: number;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  end: (...args: never[]) => unknown;
  once(event: 'finish' | 'close' | 'pipe' | 'unpipe', listener: () => void): unknown;
}

/**
 * Tells `complete` when the request answered on `res` is over, `answer` being the framework's response (given to
 * `requestWasSuccessful`): once `res` has handed its whole response to the connection, with the final status.
 * When the connection closes first (the client left), `complete.left` is told at once, and the request is over
 * only when the handler is done with it, even though nothing more can reach the client: a concurrency limit
 * guards the server's work, which goes on. Done is when `settled` settles, for a framework whose middleware chain
 * is the handler (Koa 2 ends no response whose client left; @hono/node-server cancels a streamed body rather than
 * ending it); otherwise when the handler ends the response (`end()`), or hands it a body to pipe, which the close
 * has cut off. A handler that never does holds its slot until the lease expires (the store frees it); nothing
 * here outlives `res` and `settled`.
 */
export function whenOver<Res>(
  res: NodeResponse,
  complete: Complete<Res>,
  answer: Res,
  settled?: PromiseLike<unknown>,
): void {
  let gone = false;
  let handled = false;
  const sent = () => complete(res.statusCode, answer);
  const over = () => complete(undefined, answer);
  const closed = () => {
    // Sent in full just before the close, even if its 'finish' was lost to the reset.
    if (res.writableFinished) return sent();
    gone = true;
    complete.left(answer);
    if (handled || (settled === undefined && res.writableEnded)) over();
    else if (settled === undefined) whenEnded(res, over);
  };
  if (settled !== undefined) {
    const done = () => {
      handled = true;
      if (gone) over();
    };
    settled.then(done, done);
  }
  if (res.writableFinished) sent();
  else if (res.destroyed) closed();
  else {
    res.once('finish', sent);
    res.once('close', closed);
  }
}

/**
 * Calls `ended` once the handler is done with a response whose connection has closed. Node emits neither 'finish'
 * nor 'close' for an end() after the close (its 'close' came with the reset), so the call itself is the sign. A
 * body piped into it never ends it: the close cuts a pipe in progress ('unpipe'), and one begun after it never
 * flows ('pipe').
 */
function whenEnded(res: NodeResponse, ended: () => void): void {
  const { end } = res;
  res.end = function (this: unknown, ...args: never[]) {
    try {
      return Reflect.apply(end, this, args);
    } finally {
      ended();
    }
  };
  res.once('unpipe', ended);
  res.once('pipe', ended);
}

/** A node:http response, as @hono/node-server hands it over in `c.env.outgoing`. */
export function isNodeResponse(value: unknown): value is NodeResponse {
  const res = value as Partial<NodeResponse> | undefined;
  return (
    typeof res?.once === 'function' &&
    typeof res.end === 'function' &&
    typeof res.writableFinished === 'boolean'
  );
}
