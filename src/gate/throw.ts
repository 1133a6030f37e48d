// The `throw` option of the adapters that can hand a rejection to the framework's error handler, checked once.
import { configError } from '../core/errors.js';

/**
 * The `throw` option at wire-up: a boolean (default false), refused beside `handler`, since a thrown rejection
 * is answered by the framework's error handler, which `answeredBy` names (e.g. "the app's onError answers it").
 */
export function throwOption(value: unknown, handler: unknown, answeredBy: string): boolean {
  const throws = value ?? false;
  if (typeof throws !== 'boolean') throw configError('throw', 'must be a boolean', throws);
  if (throws && handler !== undefined)
    throw configError('throw', `cannot be combined with \`handler\`: ${answeredBy}`);
  return throws;
}

/** The rejection body's own `message`, for the thrown error's; undefined when it has none (a `message` object). */
export function rejectionMessage(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}
