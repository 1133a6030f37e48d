// An optional peer dependency loaded on first use, so the subpath that needs it imports in any install.
import { environmentError } from './errors.js';
import { requireFromHere } from './module-location.js';

/**
 * The package `name`, or a configuration error saying that `caller` needs it (with `otherwise`, the way to go
 * without it). Loaded when called rather than imported, so an app that never calls `caller` never needs it.
 */
export function optionalPeer<T>(name: string, caller: string, otherwise = ''): T {
  try {
    return requireFromHere()(name) as T;
  } catch (cause) {
    if ((cause as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw cause;
    throw environmentError(
      `${caller} needs the \`${name}\` package (npm install ${name})${otherwise}`,
      cause,
    );
  }
}
