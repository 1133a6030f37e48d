// The error a simulation raises for input that is not a usable scenario (as opposed to a bad policy option).
import { TollgateError } from '../../core/errors.js';

export function argumentError(message: string): TollgateError {
  return new TollgateError('ERR_TOLLGATE_ARGUMENT', message);
}
