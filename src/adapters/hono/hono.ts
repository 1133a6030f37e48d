// Hono 4 middleware on Web-standard Request/Response: usable on Node, Bun, Deno, Workers or any fetch server.
import type { Context, MiddlewareHandler } from 'hono';
import type { GetConnInfo } from 'hono/conninfo';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { environmentError } from '../../core/errors.js';
import { optionalFunction } from '../../core/validate.js';
import type { Decision } from '../../decision/decision.js';
import type { RateLimitInfo } from '../../decision/rate-limit-info.js';
import type { Complete } from '../../gate/completion.js';
import { createGate, type GateOutcome } from '../../gate/gate.js';
import type { GateOptions } from '../../gate/options.js';
import { isNodeResponse, whenOver } from '../../gate/response.js';
import { rejectionMessage, throwOption } from '../../gate/throw.js';
import type { Identity } from '../../identity/identity.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The request's rate-limit figures, set by `rateLimit()` on every request it counted (admitted or not). */
    rateLimit: RateLimitInfo | undefined;
  }
}

export interface HonoRateLimitOptions extends GateOptions<Context, Response> {
  /** Answers a rejected request yourself; the rate-limit headers are added to the Response you return. */
  readonly handler?: (c: Context, decision: Decision) => Response | Promise<Response>;
  /**
   * Throw a rejection as `HTTPException(statusCode, { res })` for `app.onError` to answer, instead of answering it
   * here. Its `res` is the answer the middleware would have sent. The rate-limit headers reach whatever onError
   * returns, and Hono's default error handler answers `res` as it is. Default false.
   */
  readonly throw?: boolean;
}

/**
 * Hono middleware: counts each request, sets the rate-limit headers, and answers a rejection 429 itself (or throws
 * it to `app.onError` with `throw: true`). The figures are in `c.get('rateLimit')`.
 *
 * @example
 * const app = new Hono();
 * app.use('/api/*', rateLimit({ requestsPerMinute: 100, scope: 'api' }));
 * app.get('/api/quota', (c) => c.json({ remaining: c.get('rateLimit')?.remaining }));
 * serve({ fetch: app.fetch, port: 3000 }); // @hono/node-server, which gives the client's address
 */
export function rateLimit(options: HonoRateLimitOptions = {}): MiddlewareHandler {
  const gate = createGate<Context, Context>(readingResponse(options), {
    name: 'rateLimit',
    identifier: nodeClientAddress(),
    options: ['handler', 'throw'],
  });
  const handler = optionalFunction('handler', options.handler);
  const throws = throwOption(options.throw, handler, "the app's onError answers a thrown rejection");

  return async (c, next) => {
    const outcome = await gate.check(c);
    if (outcome.action === 'fail') {
      c.res = Response.json(outcome.body, { status: outcome.status });
      return;
    }
    if (outcome.info !== undefined) c.set('rateLimit', outcome.info);
    if (outcome.action === 'next') {
      const { complete } = outcome;
      if (complete === undefined) await next();
      else await completing(c, next, complete);
    } else if (throws) throw rejection(c, outcome);
    else if (handler === undefined) c.res = Response.json(outcome.body, { status: outcome.status });
    else c.res = await handler(c, outcome.decision);
    // Set on the final Response, so they reach it however it was built (c.json or a bare Response); Hono's own
    // cors and timing middleware write c.res.headers the same way.
    for (const [name, value] of Object.entries(outcome.headers)) c.res.headers.set(name, value);
  };
}

/**
 * The rejection for `app.onError`, its answer the middleware's own. Set as `c.res` too: Hono copies that
 * Response's headers onto whatever onError returns (a bare Response included), and `c.json()` starts from them.
 */
function rejection(
  c: Context,
  { status, body, headers }: Extract<GateOutcome, { action: 'reject' }>,
): HTTPException {
  c.res = Response.json(body, { status, headers });
  const message = rejectionMessage(body);
  return new HTTPException(status as ContentfulStatusCode, {
    res: Response.json(body, { status, headers }),
    ...(message === undefined ? {} : { message }),
  });
}

/**
 * The options with `requestWasSuccessful` asked `(c, c.res)` once the request is over: Hono replaces `c.res` as the
 * app runs, so the gate holds the context and reads the Response it has by then.
 */
function readingResponse({
  requestWasSuccessful,
  ...options
}: HonoRateLimitOptions): GateOptions<Context, Context> {
  if (requestWasSuccessful === undefined) return options;
  // Anything but a function goes on as it is, for the gate to refuse naming the option.
  const asked =
    typeof requestWasSuccessful === 'function'
      ? (c: Context) => requestWasSuccessful(c, c.res)
      : (requestWasSuccessful as never);
  return { ...options, requestWasSuccessful: asked };
}

/**
 * Runs the app, then ends what the request holds. On @hono/node-server that is when the node:http response is
 * sent (a streamed body to its last chunk); when its client leaves first, once the app has returned its Response
 * (the server cancels a streamed body then, and never ends it). Elsewhere (Bun, Deno, Workers, `app.request()`)
 * the Response is all there is to watch, so it is when the app has returned it.
 */
async function completing(c: Context, next: () => Promise<void>, complete: Complete<Context>): Promise<void> {
  const outgoing: unknown = c.env?.outgoing;
  if (isNodeResponse(outgoing)) {
    const downstream = next();
    whenOver(outgoing, complete, c, downstream);
    return downstream;
  }
  try {
    await next();
  } catch (error) {
    // Hono answers what a handler throws itself; only an error thrown past it (not an Error) lands here.
    complete(undefined, c);
    throw error;
  }
  complete(c.res.status, c);
}

/**
 * The default identifier: the socket address from @hono/node-server's connection info. It is imported on first
 * use, so that apps passing `identifier` (or running elsewhere) never need that package.
 *
 * A missing address is reported per request (a logged configuration error and a 500), not at wire-up: whether
 * a connection address exists depends on the server that delivers each request (@hono/node-server, Bun, a
 * Worker, `app.request()` in tests), which this synchronous factory cannot see. Checking only that the package
 * is installed would pass apps it cannot serve.
 */
function nodeClientAddress(): (c: Context) => Promise<Identity> {
  let getConnInfo: Promise<GetConnInfo> | undefined;
  return async (c) => {
    getConnInfo ??= import('@hono/node-server/conninfo').then((module) => module.getConnInfo);
    try {
      return (await getConnInfo)(c).remote.address;
    } catch (cause) {
      throw environmentError(
        '`identifier` is required unless the app is served by @hono/node-server, whose connection info gives ' +
          'the client address; pass `identifier: (c) => ...` (e.g. from a trusted proxy header).',
        cause,
        'identifier',
      );
    }
  };
}
