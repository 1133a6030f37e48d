// A CommonJS project: require() of every subpath, with Node's require() of ES modules turned off, and the drop-ins
// that are their module.exports as the libraries they replace.
import { check, NO_REQUIRE_ESM, runAsync, specifierOf } from './install-project.js';

/**
 * Drop-ins whose `require()` is their default export, as the library's own CommonJS build has it: the names each
 * must also carry, equal to the module itself.
 */
const MODULE_IS_DEFAULT: Readonly<Record<string, readonly string[]>> = {
  './express-rate-limit': ['default', 'rateLimit'],
  './fastify-rate-limit': ['default', 'fastifyRateLimit'],
};

/**
 * `require()` of each of `subpaths` in the project, concurrently, `where` saying which project; with `flags` (by
 * default, Node's require() of ES modules off) Node cannot fall back to loading the ES build.
 */
export async function requiresEverySubpath(
  project: string,
  subpaths: readonly string[],
  where = 'in a CommonJS project',
  flags = NO_REQUIRE_ESM,
): Promise<void> {
  const off = flags.length > 0 ? ', with require() of ES modules off' : '';
  await Promise.all(
    subpaths.map(async (subpath) => {
      const specifier = specifierOf(subpath);
      const loaded = await runAsync(process.execPath, [...flags, '-e', `require('${specifier}')`], project);
      check(loaded.status === 0, `require('${specifier}') loads ${where}${off}`, loaded.output.trim());
    }),
  );
}

/** `require('tollgate/express-rate-limit')` is rateLimit itself, `require('tollgate/fastify-rate-limit')` the plugin. */
export async function dropInsAreTheirModule(project: string): Promise<void> {
  for (const [subpath, names] of Object.entries(MODULE_IS_DEFAULT)) {
    const specifier = specifierOf(subpath);
    const script = `const m = require('${specifier}');
      const wrong = ${JSON.stringify(names)}.filter((name) => m[name] !== m);
      if (typeof m !== 'function' || wrong.length > 0) throw new Error(typeof m + ', not itself: ' + wrong);`;
    const loaded = await runAsync(process.execPath, [...NO_REQUIRE_ESM, '-e', script], project);
    check(
      loaded.status === 0,
      `require('${specifier}') is a function, and its ${names.map((name) => `.${name}`).join(' and ')}`,
      loaded.output.trim(),
    );
  }
}
