// The logger every layer accepts: what the gate, the stores and the admin endpoints need from console, pino or winston.
/** Anything with `warn` and `error`: console, pino, winston. Errors are logged error first, as pino expects. */
export interface Logger {
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}
