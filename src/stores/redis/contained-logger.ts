// The application's logger as the store calls it: a logger that throws must never change a decision or end the process.
import type { Logger } from '../../core/logger.js';

/**
 * The logger with every throw contained. Logs are written from inside decisions and from background work (a batch's
 * script call, a breaker's probe) where a throw would answer a decision twice or reject with nobody to catch it; a
 * line the logger cannot write is lost, and it has no other logger to go to.
 */
export function containedLogger(logger: Logger): Logger {
  return {
    warn: (...args) => contain(() => logger.warn(...args)),
    error: (...args) => contain(() => logger.error(...args)),
  };
}

function contain(write: () => void): void {
  try {
    write();
  } catch {
    // Nowhere left to report it.
  }
}
