// Where the library's files lie, read from a stack frame on first use: no `import.meta`, so one source serves ESM, CommonJS and bundles.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This module's place in the library's folder (src/, dist/ or dist/cjs/); a file of another name is a bundle. */
const OWN_PLACE = /[\\/]core[\\/]module-location\.[cm]?[jt]s$/;

/** Null once known to run from no file (code evaluated from a string). */
let running: string | null | undefined;
let root: string | undefined;

/**
 * The file this code runs from: this module's own, or the bundle it was bundled into. Read from V8's call site of
 * this very function, a file: URL for an ES module and a path for CommonJS, with the stack's format and depth set
 * for the one read and put back: an app's own `Error.prepareStackTrace` changes nothing here.
 */
export function runningFile(): string | undefined {
  if (running !== undefined) return running ?? undefined;
  const { prepareStackTrace, stackTraceLimit } = Error;
  let file: string | null | undefined;
  try {
    Error.stackTraceLimit = 1;
    Error.prepareStackTrace = (_error, sites) => sites;
    const holder: { stack?: unknown } = {};
    Error.captureStackTrace(holder);
    file = (holder.stack as NodeJS.CallSite[] | undefined)?.[0]?.getFileName();
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
  if (file?.startsWith('file:')) file = fileURLToPath(file);
  running = file !== undefined && file !== null && isAbsolute(file) ? file : null;
  return running ?? undefined;
}

/** The folder holding the library's modules (src/, dist/ or dist/cjs/), or undefined when bundled into an app. */
export function libraryFolder(): string | undefined {
  const file = runningFile();
  return file !== undefined && OWN_PLACE.test(file) ? dirname(dirname(file)) : undefined;
}

/**
 * The package's root: the first folder above the library's modules with a named package.json (dist/cjs/ has one,
 * nameless, that only makes its files CommonJS). Throws when the package's files are not on disk beside this module.
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  for (let dir = libraryFolder(); dir !== undefined && dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && typeof JSON.parse(readFileSync(manifest, 'utf8')).name === 'string') {
      root = dir;
      return root;
    }
  }
  throw new Error(
    `tollgate's package files are not on disk beside its modules (${runningFile() ?? 'no file'}): bundled?`,
  );
}

/**
 * A `require` resolving from this module, or from the bundle that holds it (the app's own node_modules), or else
 * from the working directory: what loads an optional peer synchronously in every format.
 */
export function requireFromHere(): NodeJS.Require {
  return createRequire(runningFile() ?? join(process.cwd(), 'noop.js'));
}
