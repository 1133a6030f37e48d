// POST /json: the rate limit service's request and response as JSON, for clients that cannot speak gRPC, answered
// as the reference service answers it.
import type { IncomingMessage } from 'node:http';
import { Code, type RateLimitRequest, type RateLimitResponse } from '../protocol/messages.js';
import { type Outcome, refused } from './answer.js';
import { readBody } from './request-body.js';
import { formatRateLimitResponse, parseRateLimitRequest } from './rls-json.js';

/** The status of each overall code, as the reference's: 429 over the limit, 500 for a response with no code. */
const STATUS = { [Code.UNKNOWN]: 500, [Code.OK]: 200, [Code.OVER_LIMIT]: 429 } as const;
const RESULT = { [Code.UNKNOWN]: 'error', [Code.OK]: 'ok', [Code.OVER_LIMIT]: 'over_limit' } as const;

/** 400 with the reason for a body that is not a request or that the engine refuses; else the response as JSON. */
export async function answerJson(
  shouldRateLimit: (request: RateLimitRequest) => Promise<RateLimitResponse>,
  req: IncomingMessage,
): Promise<Outcome> {
  const body = await readBody(req);
  if (typeof body !== 'string') return body;
  let response: RateLimitResponse;
  try {
    response = await shouldRateLimit(parseRateLimitRequest(body));
  } catch (error) {
    return refused(error);
  }
  return {
    answer: {
      status: STATUS[response.overallCode],
      headers: [['content-type', 'application/json']],
      body: formatRateLimitResponse(response),
    },
    result: RESULT[response.overallCode],
  };
}
