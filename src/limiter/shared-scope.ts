// A warning, once, when two limiters on one store fall into the same default scope and so spend each other's quota.
import { sep } from 'node:path';
import { libraryFolder, runningFile } from '../core/module-location.js';
import { processGlobal } from '../core/process-global.js';
import type { AnyPolicy } from '../policies/policy.js';
import type { Store } from '../stores/store.js';

/** A creation site the stack does not tell: the app was bundled with the library into one file. */
const UNKNOWN = 'an unknown place';

/**
 * The default scope is a hash of the policies, the same in every process of a fleet; so two limiters with equal
 * policies and no `scope` (`rateLimit({ requestsPerMinute: 5 })` on two routes, say) share their buckets, and a
 * client's requests to either route spend from one quota. A scope distinct per limiter could not stay the same
 * across processes (limiters are created in an order routes do not fix), so the sharing stands, and is reported.
 */
export function warnOnSharedDefaultScope(store: Store, scope: string, policies: readonly AnyPolicy[]): void {
  // Per store, the default scopes taken so far and where their first limiter was created; one per process, as the
  // default store is, so that limiters of the ES module and the CommonJS build on it are told of each other.
  const taken = processGlobal('defaultScopes', () => new WeakMap<Store, Map<string, string>>());
  let scopes = taken.get(store);
  if (scopes === undefined) {
    scopes = new Map();
    taken.set(store, scopes);
  }
  const here = creationSite();
  const first = scopes.get(scope);
  if (first === undefined) {
    scopes.set(scope, here);
    return;
  }
  if (first === '') return;
  // Said once per scope: a third limiter adds nothing the warning has not said.
  scopes.set(scope, '');
  const limits = policies.map((p) => `${p.kind} ${p.limit}`).join(' + ');
  const where =
    first === here && here !== UNKNOWN
      ? `both created at ${here} (a loop or a factory makes one per call)`
      : `one created at ${first}, another at ${here}`;
  process.emitWarning(
    `Two limiters on one store have the same policies (${limits}) and no \`scope\`, so they share the default ` +
      `scope "${scope}" and spend from the same buckets: ${where}. Give each its own \`scope\`, give each app ` +
      'instance its own `store` (`new MemoryStore()`: apps built per test share the default store otherwise), or ' +
      'reuse one limiter where sharing is meant.',
    { type: 'TollgateWarning', code: 'TOLLGATE_SHARED_SCOPE' },
  );
}

/**
 * The application's line that created the limiter: the first frame outside this library, Node and dependencies.
 * The library's frames are those of its folder (src/, dist/ or dist/cjs/), or of the bundle it was bundled into.
 */
function creationSite(): string {
  const folder = libraryFolder();
  const library = folder === undefined ? runningFile() : `${folder}${sep}`;
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  const outside = (skip: (frame: string) => boolean) =>
    frames.find(
      (frame) =>
        (library === undefined || !frame.includes(library)) && !frame.includes('node:') && !skip(frame),
    );
  const frame = outside((f) => f.includes('/node_modules/')) ?? outside(() => false) ?? '';
  return frame.trim().replace(/^at /, '') || UNKNOWN;
}
