// /check: one HTTP request limited as a gateway's auth subrequest asks (nginx auth_request, Traefik ForwardAuth,
// Envoy ext_authz over HTTP), its descriptors built by the domain's rules or given as JSON.
import type { IncomingMessage } from 'node:http';
import type { HttpCheckRules, ServiceConfig } from '../config/types.js';
import { Code, type RateLimitRequest, type RateLimitResponse } from '../protocol/messages.js';
import { type Outcome, refused, textAnswer } from './answer.js';
import { checkDescriptors } from './check-descriptors.js';
import { readBody } from './request-body.js';
import { parseRateLimitRequest } from './rls-json.js';

export interface CheckService {
  shouldRateLimit(request: RateLimitRequest): Promise<RateLimitResponse>;
  config(): ServiceConfig;
}

type DenyStatus = HttpCheckRules['denyStatus'];

/**
 * Answers 200 when every descriptor is within its limit (and when the rules build none, as Envoy then asks
 * nothing), else the deny status: the rules' `denyStatus` or the query's `deny=403|429`, with Retry-After. A POST to
 * `/check` itself with a body gives its descriptors as JSON (`{ "domain"?, "descriptors": [...] }`); any other
 * request (any method: Envoy's ext_authz forwards the original one, under a path prefix) is read by the rules.
 */
export async function answerCheck(
  service: CheckService,
  req: IncomingMessage,
  path: string,
  query: URLSearchParams,
): Promise<Outcome> {
  const config = service.config();
  const deny = query.get('deny');
  if (deny !== null && deny !== '403' && deny !== '429')
    return { answer: textAnswer(400, '`deny` must be 403 or 429'), result: 'invalid' };
  const body = req.method === 'POST' && path === '/check' ? await readBody(req) : '';
  if (typeof body !== 'string') return body;
  const request = body.trim() === '' ? byRules(config, req, query) : given(config, body, query);
  if ('answer' in request) return request;
  const denyStatus: DenyStatus =
    deny === null ? (config.httpChecks.get(request.domain)?.denyStatus ?? 429) : deny === '403' ? 403 : 429;
  if (request.descriptors.length === 0) return { answer: textAnswer(200, 'OK'), result: 'ok' };
  let response: RateLimitResponse;
  try {
    response = await service.shouldRateLimit(request);
  } catch (error) {
    return refused(error);
  }
  return checkOutcome(response, denyStatus);
}

/** The request the domain's rules make of `req`: the query's `domain`, else the first domain with rules. */
function byRules(
  config: ServiceConfig,
  req: IncomingMessage,
  query: URLSearchParams,
): RateLimitRequest | Outcome {
  const domain = query.get('domain') ?? config.httpChecks.keys().next().value;
  const rules = domain === undefined ? undefined : config.httpChecks.get(domain);
  if (rules === undefined) {
    const which = domain === undefined ? 'no domain has' : `the domain "${domain}" has no`;
    const message = `${which} HTTP check rules, and the request gives no descriptors as a JSON body`;
    return { answer: textAnswer(400, message), result: 'invalid' };
  }
  const descriptors = checkDescriptors(rules, { headers: req.headers, peer: req.socket.remoteAddress });
  return { domain: rules.domain, descriptors, hitsAddend: 0 };
}

/** The request a JSON body gives, its domain from the body, else the query, else the first domain with rules. */
function given(config: ServiceConfig, body: string, query: URLSearchParams): RateLimitRequest | Outcome {
  let request: RateLimitRequest;
  try {
    request = parseRateLimitRequest(body);
  } catch (error) {
    return refused(error);
  }
  const domain = request.domain || (query.get('domain') ?? config.httpChecks.keys().next().value);
  if (domain === undefined || domain === '') {
    const message = 'the body names no domain, nor does the query, and no domain has HTTP check rules';
    return { answer: textAnswer(400, message), result: 'invalid' };
  }
  return { ...request, domain };
}

/** The engine's response headers (the RateLimit fields, and Retry-After when waiting helps) on either answer. */
function checkOutcome(response: RateLimitResponse, denyStatus: DenyStatus): Outcome {
  const headers = response.responseHeadersToAdd.map(({ key, value }) => [key, value] as const);
  if (response.overallCode === Code.OK) return { answer: textAnswer(200, 'OK', headers), result: 'ok' };
  if (response.overallCode !== Code.OVER_LIMIT)
    return { answer: textAnswer(500, 'the decision engine answered no code'), result: 'error' };
  const answer =
    response.rawBody === undefined
      ? textAnswer(denyStatus, 'rate limit exceeded', headers)
      : { status: denyStatus, headers, body: response.rawBody };
  return { answer, result: 'over_limit' };
}
