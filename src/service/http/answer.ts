// What a route of the HTTP server answers, and how a request the decision engine refuses is answered.
import type { ServerResponse } from 'node:http';
import { isTollgateError } from '../../core/errors.js';
import type { ServiceObserver } from '../engine/observer.js';

/** The result a request is counted under in the service's metrics. */
export type RequestResult = Parameters<ServiceObserver['request']>[2];

export interface Answer {
  readonly status: number;
  /** In order; a name may come more than once. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | Uint8Array;
}

/** An answer and, for the routes that decide, the result it is counted under. */
export interface Outcome {
  readonly answer: Answer;
  readonly result?: RequestResult;
}

/** A plain-text answer: `message` and a newline. */
export function textAnswer(status: number, message: string, headers: Answer['headers'] = []): Answer {
  return {
    status,
    headers: [['content-type', 'text/plain; charset=utf-8'], ...headers],
    body: `${message}\n`,
  };
}

/**
 * The answer to a request the engine refuses as malformed (an ERR_TOLLGATE_ARGUMENT error): 400 with the reason.
 * Any other failure is rethrown, for the server to log and answer 500.
 */
export function refused(error: unknown): Outcome {
  if (!isTollgateError(error, 'ERR_TOLLGATE_ARGUMENT')) throw error;
  return { answer: textAnswer(400, error.message), result: 'invalid' };
}

export function send(res: ServerResponse, { status, headers, body }: Answer, closing: boolean): void {
  res.statusCode = status;
  for (const [name, value] of headers) res.appendHeader(name, value);
  // A server shutting down tells keep-alive clients to go elsewhere rather than reuse this connection.
  if (closing) res.setHeader('connection', 'close');
  res.end(body);
}
