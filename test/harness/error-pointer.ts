// The pointer every TollgateError message ends with, for tests that check a message's own words exactly up to it.
import assert from 'node:assert/strict';
import type { TollgateErrorCode } from '../../src/core/errors.js';

/** ` (see tollgate/docs/errors.md#err_tollgate_config)`: spelled out here rather than imported, so a change shows. */
export function pointerOf(code: TollgateErrorCode): string {
  return ` (see tollgate/docs/errors.md#${code.toLowerCase()})`;
}

/** The whole message of a TollgateError of `code` whose own words are `message`. */
export function pointed(message: string, code: TollgateErrorCode = 'ERR_TOLLGATE_CONFIG'): string {
  return message + pointerOf(code);
}

/** `error`'s message without its pointer, once asserted that it ends with the one to its own code's section. */
export function withoutPointer(error: unknown): string {
  const { code, message } = error as { readonly code: TollgateErrorCode; readonly message: string };
  const end = pointerOf(code);
  assert.ok(message.endsWith(end), `${JSON.stringify(message)} ends with ${JSON.stringify(end)}`);
  return message.slice(0, -end.length);
}
