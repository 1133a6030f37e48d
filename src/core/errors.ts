// Tollgate's own error type: a stable `code` to branch on, and the option at fault when there is one.
// Errors Tollgate raises carry it; errors from elsewhere (a Redis driver, a custom store, an application callback)
// pass through unchanged or as the `cause` of a TollgateError.

/** Stable codes: match on these, never on messages. */
export type TollgateErrorCode =
  /** An option is missing, malformed or out of range; thrown once, at wire-up. */
  | 'ERR_TOLLGATE_CONFIG'
  /** A per-request argument (identifier, cost) is unusable. */
  | 'ERR_TOLLGATE_ARGUMENT'
  /** The store could not answer (connection, script, protocol). */
  | 'ERR_TOLLGATE_STORE'
  /** The store did not answer within its time budget. */
  | 'ERR_TOLLGATE_TIMEOUT'
  /** `limiter.wait()`: the request cannot pass within `maxWaitMs` (or ever). */
  | 'ERR_TOLLGATE_WAIT_TIMEOUT';

export interface TollgateErrorOptions {
  readonly option?: string;
  readonly cause?: unknown;
}

export class TollgateError extends Error {
  override readonly name = 'TollgateError';
  readonly code: TollgateErrorCode;
  /** The option that was rejected, for configuration errors. */
  readonly option: string | undefined;

  constructor(code: TollgateErrorCode, message: string, options: TollgateErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.option = options.option;
  }
}

/** A configuration error whose message names the option: `` `capacity` must be a positive integer ``. */
export function configError(option: string, requirement: string, ...received: [unknown?]): TollgateError {
  const got = received.length > 0 ? ` (received ${describe(received[0])})` : '';
  return new TollgateError('ERR_TOLLGATE_CONFIG', `\`${option}\` ${requirement}${got}`, { option });
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return String(value);
}
