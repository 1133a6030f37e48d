// envoy.service.ratelimit.v3.RateLimitService on grpc-js: its definition and the handler of ShouldRateLimit.
import type { handleUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { isTollgateError, TollgateError } from '../../core/errors.js';
import { Code, type RateLimitRequest, type RateLimitResponse } from '../protocol/messages.js';
import { GrpcStatus, methodDefinition } from './grpc-method.js';
import { decodeRateLimitRequest, encodeRateLimitRequest } from './rls-request.js';
import { decodeRateLimitResponse, encodeRateLimitResponse } from './rls-response.js';

/** The fully qualified service name, as health checks ask about it. */
export const RLS_SERVICE = 'envoy.service.ratelimit.v3.RateLimitService';

/** The name envoyproxy/ratelimit reports health for, which probes written for it ask about. */
export const REFERENCE_HEALTH_NAME = 'ratelimit';

/** The service's definition, refusing a request over `maxBytes` as INVALID_ARGUMENT (counted as `invalid`). */
export function rlsServiceDefinition(maxBytes: number) {
  return {
    ShouldRateLimit: methodDefinition(
      `/${RLS_SERVICE}/ShouldRateLimit`,
      {
        decodeRequest: decodeRateLimitRequest,
        encodeRequest: encodeRateLimitRequest,
        decodeResponse: decodeRateLimitResponse,
      },
      false,
      maxBytes,
    ),
  };
}

/** How a call ended, as the service's metrics count it. */
export type CallResult = 'ok' | 'over_limit' | 'invalid' | 'error';

export interface RlsHandlerOptions {
  readonly shouldRateLimit: (request: RateLimitRequest) => Promise<RateLimitResponse>;
  /** Each call's time in ms and how it ended. */
  readonly onRequest: ((ms: number, result: CallResult) => void) | undefined;
  /** A failure answered UNAVAILABLE, or thrown by `onRequest`: the caller's to log. */
  readonly onError: ((error: unknown) => void) | undefined;
  readonly now: () => number;
}

/** ShouldRateLimit's handler: it never throws, and the promise of each call always settles handled. */
export function shouldRateLimitHandler(
  options: RlsHandlerOptions,
): handleUnaryCall<RateLimitRequest | Error, Buffer> {
  const report = (error: unknown): void => {
    // The caller's logger failing too leaves nothing to tell: dropping it is all that avoids a crash.
    try {
      options.onError?.(error);
    } catch {}
  };
  return (call, callback) => {
    const started = options.now();
    answer(options.shouldRateLimit, call.request, callback, report).then((result) => {
      try {
        options.onRequest?.(options.now() - started, result);
      } catch (error) {
        report(error);
      }
    }, report);
  };
}

async function answer(
  shouldRateLimit: RlsHandlerOptions['shouldRateLimit'],
  request: RateLimitRequest | Error,
  callback: sendUnaryData<Buffer>,
  report: (error: unknown) => void,
): Promise<CallResult> {
  if (request instanceof Error) {
    callback({ code: GrpcStatus.INVALID_ARGUMENT, details: request.message });
    return 'invalid';
  }
  try {
    const response = await shouldRateLimit(request);
    callback(null, encodeRateLimitResponse(response));
    return response.overallCode === Code.OVER_LIMIT ? 'over_limit' : 'ok';
  } catch (error) {
    if (isTollgateError(error, 'ERR_TOLLGATE_ARGUMENT')) {
      callback({ code: GrpcStatus.INVALID_ARGUMENT, details: error.message });
      return 'invalid';
    }
    // UNAVAILABLE, not INTERNAL: what fails past a valid request is the store (down, slow) or the service's state,
    // which gRPC defines as transient (a client may retry), where INTERNAL says the server is broken; Envoy's filter
    // applies its failure_mode_deny to either. Only a TollgateError's message is sent: another's could carry
    // internals (hosts, paths).
    const details =
      error instanceof TollgateError ? error.message : 'the rate limit service could not decide';
    callback({ code: GrpcStatus.UNAVAILABLE, details });
    report(error);
    return 'error';
  }
}
