// The optional peers the service loads, checked together before anything starts, so one message names them all.
import { environmentError } from '../../core/errors.js';
import { requireFromHere } from '../../core/module-location.js';

/**
 * Throws ERR_TOLLGATE_CONFIG naming every package the service needs and cannot find: `yaml` to read its files,
 * `@grpc/grpc-js` when it serves gRPC. Each is loaded where it is used; this only spares a user installing them
 * one failed start at a time.
 */
export function checkServicePeers(servesGrpc: boolean): void {
  const needed = servesGrpc ? ['@grpc/grpc-js', 'yaml'] : ['yaml'];
  const missing = needed.filter((name) => !resolvable(name));
  if (missing.length === 0) return;
  const names = missing.map((name) => `\`${name}\``).join(' and ');
  const noun = missing.length === 1 ? 'package' : 'packages';
  throw environmentError(
    `tollgate serve needs the ${names} ${noun} (npm install ${missing.join(' ')})`,
    undefined,
  );
}

function resolvable(name: string): boolean {
  try {
    requireFromHere().resolve(name);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
    return false;
  }
}
