// TypeScript apps on the installed package: one small app compiled under each module setting and run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITED, limitedHttpApp } from './install-apps.js';
import { check, NO_REQUIRE_ESM, runAsync } from './install-project.js';

/**
 * Each `module` setting with its resolution, and the type of the folder the app is in (so CommonJS and ES module
 * output alike run in Node): `node16` under `"type": "commonjs"` resolves the `require` types, `nodenext` under
 * `"type": "module"` the `import` ones. `commonjs` takes TypeScript's default resolution for it (`node10` is gone
 * from TypeScript 7).
 */
const SETTINGS = [
  { module: 'commonjs', type: 'commonjs' },
  { module: 'node16', moduleResolution: 'node16', type: 'commonjs' },
  { module: 'nodenext', moduleResolution: 'nodenext', type: 'module' },
  { module: 'esnext', moduleResolution: 'bundler', type: 'module' },
] as const;

/** Compiles and runs the app once per setting, concurrently; TypeScript and @types/node are in the project. */
export async function typescriptAppsRun(project: string): Promise<void> {
  const tsc = join(project, 'node_modules', '.bin', 'tsc');
  await Promise.all(
    SETTINGS.map(async ({ type, ...options }) => {
      const dir = join(project, `ts-${options.module}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ type })}\n`);
      writeFileSync(join(dir, 'app.ts'), limitedHttpApp(true));
      const compilerOptions = { ...options, target: 'es2022', strict: true, types: ['node'], outDir: 'out' };
      writeFileSync(
        join(dir, 'tsconfig.json'),
        `${JSON.stringify({ compilerOptions, files: ['app.ts'] })}\n`,
      );
      const what = `a TypeScript app with ${Object.values(options).join(' + ')} (the package's types checked too)`;
      const compiled = await runAsync(tsc, ['-p', dir], project);
      if (compiled.status !== 0) return check(false, `${what} compiles`, compiled.output.trim());
      const flags = type === 'commonjs' ? NO_REQUIRE_ESM : [];
      const ran = await runAsync(process.execPath, [...flags, join(dir, 'out', 'app.js')], project);
      check(ran.stdout === LIMITED, `${what} compiles, runs and is limited`, ran.output.trim());
    }),
  );
}
