// The CommonJS build, dist/cjs/: each module tsc built to dist/ turned into CommonJS, and its types beside it.
//
// Why this way: tsc builds the ES modules and their .d.ts (checked, as `npm run typecheck` checks them), then esbuild
// rewrites each built file to CommonJS on its own, no bundling, so dist/cjs/ holds the same files with the same
// relative `require('./x.js')`s, and every module (the default store, the shared-scope registry) exists once per
// format. A second tsc run with `module: commonjs` was the alternative: it needs a tsconfig of its own (without
// `verbatimModuleSyntax`, which refuses ES module syntax in CommonJS output) and checks the whole source again for
// output that differs in module syntax alone. The types are the ES build's .d.ts, copied: under
// dist/cjs/package.json's `"type": "commonjs"` TypeScript reads them as CommonJS, which is what they describe there.
// The command (cli.js, cli/) stays an ES module only: `bin` runs it, nothing requires it, and it awaits at top level.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const OUT = join(DIST, 'cjs');
/** The command and its modules: ES only. */
const ESM_ONLY = /^cli(\.|\/)/;
/**
 * Entries whose default export is their `module.exports`, named exports as its properties, as the libraries they
 * replace ship it: `require('tollgate/express-rate-limit')(options)` as `require('express-rate-limit')(options)`,
 * `require('tollgate/fastify-rate-limit')` the plugin itself with `.default` and `.fastifyRateLimit`.
 */
const DEFAULT_IS_MODULE = [
  'adapters/express/express-rate-limit/index.js',
  'adapters/fastify/fastify-rate-limit/index.js',
];
/** tsc's output of `export default x` or `export { x as default }`. */
const DEFAULT_EXPORT = /^export default |\bas default\b/m;
const DEFAULT_AS_MODULE_FOOTER = 'module.exports = Object.assign(module.exports.default, module.exports);';

/** The files tsc built, relative to dist/, dist/cjs/ aside. */
function built(extension: string): string[] {
  return readdirSync(DIST, { recursive: true, encoding: 'utf8' })
    .map((file) => file.split('\\').join('/'))
    .filter((file) => file.endsWith(extension) && !file.startsWith('cjs/') && !ESM_ONLY.test(file));
}

/**
 * esbuild on `files` (relative to dist/), to the same place under dist/cjs/. A warning fails the build: `import.meta`,
 * empty in CommonJS, is one.
 */
async function toCommonJs(files: readonly string[], footer?: string): Promise<void> {
  if (files.length === 0) return;
  const result = await build({
    entryPoints: files.map((file) => join(DIST, file)),
    outbase: DIST,
    outdir: OUT,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    bundle: false,
    logLevel: 'silent',
    ...(footer === undefined ? {} : { footer: { js: footer } }),
  });
  const problems = result.warnings.map((warning) => `${warning.location?.file}: ${warning.text}`);
  if (footer !== undefined) {
    for (const file of files.filter((entry) => !DEFAULT_EXPORT.test(readFileSync(join(DIST, entry), 'utf8'))))
      problems.push(`dist/${file} has no default export to be its module.exports`);
  }
  if (problems.length > 0) throw new Error(`the CommonJS build:\n${problems.join('\n')}`);
}

const modules = built('.js');
const unbuilt = DEFAULT_IS_MODULE.filter((file) => !modules.includes(file));
if (unbuilt.length > 0) throw new Error(`the CommonJS build: tsc built no ${unbuilt.join(', ')}`);
await toCommonJs(modules.filter((file) => !DEFAULT_IS_MODULE.includes(file)));
await toCommonJs(DEFAULT_IS_MODULE, DEFAULT_AS_MODULE_FOOTER);
writeFileSync(join(OUT, 'package.json'), '{ "type": "commonjs" }\n');
for (const file of built('.d.ts')) {
  mkdirSync(dirname(join(OUT, file)), { recursive: true });
  copyFileSync(join(DIST, file), join(OUT, file));
}
