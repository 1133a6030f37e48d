// A value one per process however many copies of the library load: the ES module and CommonJS builds side by side.
/** Bumped when what is kept, or how the library calls it (the `Store` interface), changes: another version keeps its own. */
const VERSION = 1;

/**
 * The process's value of `name`, made by `create` on first use: kept on `globalThis` under a `Symbol.for` key, so
 * an app that loads `import 'tollgate'` and `require('tollgate')` (two module instances) still holds one.
 */
export function processGlobal<T>(name: string, create: () => T): T {
  const slots = globalThis as unknown as Record<symbol, T | undefined>;
  const key = Symbol.for(`tollgate.${name}.v${VERSION}`);
  slots[key] ??= create();
  return slots[key];
}
