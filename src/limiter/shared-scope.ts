// A warning, once, when two limiters on one store fall into the same default scope and so spend each other's quota.
import { fileURLToPath } from 'node:url';
import type { AnyPolicy } from '../policies/policy.js';
import type { Store } from '../stores/store.js';

/** Per store, the default scopes taken so far and where their first limiter was created. */
const taken = new WeakMap<Store, Map<string, string>>();
/** Frames from inside the library (src/ or dist/, one level above this module) say nothing about which limiter of the application it was. */
const LIBRARY = fileURLToPath(new URL('..', import.meta.url));

/**
 * The default scope is a hash of the policies, the same in every process of a fleet; so two limiters with equal
 * policies and no `scope` (`rateLimit({ requestsPerMinute: 5 })` on two routes, say) share their buckets, and a
 * client's requests to either route spend from one quota. A scope distinct per limiter could not stay the same
 * across processes (limiters are created in an order routes do not fix), so the sharing stands, and is reported.
 */
export function warnOnSharedDefaultScope(store: Store, scope: string, policies: readonly AnyPolicy[]): void {
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
    first === here
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

/** The application's line that created the limiter: the first frame outside this library, Node and dependencies. */
function creationSite(): string {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  const outside = (skip: (frame: string) => boolean) =>
    frames.find((frame) => !frame.includes(LIBRARY) && !frame.includes('node:') && !skip(frame));
  const frame = outside((f) => f.includes('/node_modules/')) ?? outside(() => false) ?? frames[0] ?? '';
  return frame.trim().replace(/^at /, '') || 'an unknown place';
}
