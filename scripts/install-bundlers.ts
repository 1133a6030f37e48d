// Bundled apps on the installed package: esbuild to CommonJS and to an ES module, webpack and rollup, each run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import commonjsPlugin from '@rollup/plugin-commonjs';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import webpack from 'webpack';
import { LIMITED, limitedHttpApp } from './install-apps.js';
import { check, NO_REQUIRE_ESM, runAsync } from './install-project.js';

/** The plugin itself: imported as an ES module, as here, the default export is; its types describe the CommonJS build. */
const commonjs = commonjsPlugin as unknown as typeof commonjsPlugin.default;

/** Each bundler, run from this checkout on the project's files, writing `out` (relative to the bundle folder). */
const BUNDLERS: readonly {
  name: string;
  out: string;
  make: (entry: string, out: string) => Promise<void>;
}[] = [
  { name: 'esbuild --format=cjs', out: 'esbuild.cjs', make: (entry, out) => esbuild(entry, out, 'cjs') },
  { name: 'esbuild --format=esm', out: 'esbuild.mjs', make: (entry, out) => esbuild(entry, out, 'esm') },
  { name: 'webpack (target node)', out: 'webpack.cjs', make: webpackBundle },
  { name: 'rollup with node-resolve and commonjs', out: 'rollup.cjs', make: rollupBundle },
];

async function esbuild(entry: string, outfile: string, format: 'cjs' | 'esm'): Promise<void> {
  await build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format, logLevel: 'silent' });
}

function webpackBundle(entry: string, out: string): Promise<void> {
  const config: webpack.Configuration = {
    entry,
    target: 'node',
    mode: 'production',
    optimization: { minimize: false },
    output: { path: dirname(out), filename: basename(out) },
  };
  return new Promise((resolve, reject) => {
    webpack(config, (error, stats) => {
      if (error) reject(error);
      else if (stats?.hasErrors()) reject(new Error(stats.toString({ all: false, errors: true })));
      else resolve();
    });
  });
}

async function rollupBundle(input: string, file: string): Promise<void> {
  const bundle = await rollup({
    input,
    external: [/^node:/],
    plugins: [nodeResolve({ preferBuiltins: true }), commonjs()],
    onwarn: () => {},
  });
  await bundle.write({ file, format: 'cjs' });
  await bundle.close();
}

/** Bundles the node:http app with each bundler, concurrently, and runs each bundle until it is limited. */
export async function bundledAppsRun(project: string): Promise<void> {
  const dir = join(project, 'bundle');
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, 'app.mjs');
  writeFileSync(entry, limitedHttpApp(false));
  await Promise.all(
    BUNDLERS.map(async ({ name, out, make }) => {
      const file = join(dir, out);
      try {
        await make(entry, file);
      } catch (error) {
        return check(false, `an app bundled by ${name} builds`, String(error));
      }
      const flags = out.endsWith('.cjs') ? NO_REQUIRE_ESM : [];
      const ran = await runAsync(process.execPath, [...flags, file], project);
      check(ran.stdout === LIMITED, `an app bundled by ${name} runs and is limited`, ran.output.trim());
    }),
  );
}
