// Tollgate's own error type: a stable `code` to branch on, and the option at fault when there is one.
// Errors Tollgate raises carry it; errors from elsewhere (a Redis driver, a custom store, an application callback)
// pass through unchanged or as the `cause` of a TollgateError. Every one is built here, by the constructors below,
// so that each message ends alike: with a pointer to its code's section of docs/errors.md.

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

/**
 * ` (see tollgate/docs/errors.md#err_tollgate_config)`: the page ships in the package, and its section headings are
 * the codes, so the anchor is the code in lower case. The package's name keeps it apart from an app's own docs/.
 */
function pointer(code: TollgateErrorCode): string {
  return ` (see tollgate/docs/errors.md#${code.toLowerCase()})`;
}

export class TollgateError extends Error {
  override readonly name = 'TollgateError';
  readonly code: TollgateErrorCode;
  /** The option that was rejected, for configuration errors. */
  readonly option: string | undefined;

  constructor(code: TollgateErrorCode, message: string, options: TollgateErrorOptions = {}) {
    super(message + pointer(code), options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.option = options.option;
  }
}

/** A configuration error whose message names the option: `` `capacity` must be a positive integer ``. */
export function configError(option: string, requirement: string, ...received: [unknown?]): TollgateError {
  const got = received.length > 0 ? ` (received ${describe(received[0])})` : '';
  return new TollgateError('ERR_TOLLGATE_CONFIG', `\`${option}\` ${requirement}${got}`, { option });
}

/**
 * A configuration error found in a file: `` limits.yaml:12: `rate_limit.unit` must be one of ... ``. `option` is the
 * key at fault (as written in the file), absent when the fault is the file itself (not valid YAML).
 */
export function configErrorAt(
  place: { readonly file: string; readonly line: number },
  option: string | undefined,
  requirement: string,
  ...received: [unknown?]
): TollgateError {
  const got = received.length > 0 ? ` (received ${describe(received[0])})` : '';
  const subject = option === undefined ? '' : `\`${option}\` `;
  return new TollgateError(
    'ERR_TOLLGATE_CONFIG',
    `${place.file}:${place.line}: ${subject}${requirement}${got}`,
    {
      ...(option === undefined ? {} : { option }),
    },
  );
}

/**
 * A configuration the running app cannot serve (a package not installed, a server that gives no client address):
 * `cause` is the failure that showed it.
 */
export function environmentError(message: string, cause: unknown, option?: string): TollgateError {
  return new TollgateError('ERR_TOLLGATE_CONFIG', message, {
    cause,
    ...(option === undefined ? {} : { option }),
  });
}

/** A per-request argument that cannot be used: an identifier, a cost, a refund's admission, a simulated scenario. */
export function argumentError(message: string): TollgateError {
  return new TollgateError('ERR_TOLLGATE_ARGUMENT', message);
}

/** The store could not answer, or could not apply what it was asked. */
export function storeError(message: string, cause?: unknown): TollgateError {
  return new TollgateError('ERR_TOLLGATE_STORE', message, { cause });
}

/** The store did not answer within its time budget. */
export function timeoutError(message: string): TollgateError {
  return new TollgateError('ERR_TOLLGATE_TIMEOUT', message);
}

/** `limiter.wait()` gives up at once rather than waiting for a turn that cannot come in time: `why` says which. */
export function waitTimeoutError(maxWaitMs: number, why: string): TollgateError {
  return new TollgateError(
    'ERR_TOLLGATE_WAIT_TIMEOUT',
    `the request cannot pass within \`maxWaitMs\` (${maxWaitMs} ms): ${why}`,
  );
}

/**
 * `error` again with its message set in context (`frame` gets it without its pointer, which the new error adds
 * back), its code kept, its option kept unless another is given, and `error` as the cause.
 */
export function inContext(
  error: TollgateError,
  frame: (message: string) => string,
  option = error.option,
): TollgateError {
  const end = pointer(error.code);
  const message = error.message.endsWith(end) ? error.message.slice(0, -end.length) : error.message;
  return new TollgateError(error.code, frame(message), {
    cause: error,
    ...(option === undefined ? {} : { option }),
  });
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return String(value);
}

/**
 * Whether `error` is a Tollgate error of `code`, told by the code rather than by class, so that one raised by another
 * copy of the library (its CommonJS build beside the ES one) is told apart alike.
 */
export function isTollgateError(error: unknown, code: TollgateErrorCode): error is TollgateError {
  return (error as { code?: unknown } | null)?.code === code && error instanceof Error;
}
