// NestJS apps of each supported major on the installed package: compiled by tsc to CommonJS, run until limited.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITED, limitedNestApp } from './install-apps.js';
import { requiresEverySubpath } from './install-commonjs.js';
import { check, freshProject, NO_REQUIRE_ESM, runAsync } from './install-project.js';

/** The majors `peerDependencies` allows, each in a project of its own. */
export const NEST_MAJORS = [10, 11, 12] as const;
/** Nest 12 is itself ES modules only: a CommonJS app of it needs Node's require() of ES modules. */
const ESM_ONLY_FROM = 12;

/** Whether Node requires ES modules unflagged: from 20.19 in Node 20, from 22.12 in Node 22. */
function requiresEsm(): boolean {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
}
/** How Nest apps are compiled: decorators with their metadata, the way Nest's own starter compiles them. */
const COMPILER_OPTIONS = {
  module: 'commonjs',
  target: 'es2022',
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  strict: true,
  // As Nest's starter has it: declarations are not checked, the app is, against tollgate's types and Nest's.
  skipLibCheck: true,
  types: ['node'],
  outDir: 'out',
};

/**
 * A fresh project with Nest `major` (core, common, Express platform, reflect-metadata, rxjs) and `tarball`: the
 * `subpaths` that need Nest required, then the app built on `tollgate/nestjs`'s module and guard compiled and run.
 */
export async function nestAppRuns(
  work: string,
  tarball: string,
  major: number,
  subpaths: readonly string[],
): Promise<void> {
  if (major >= ESM_ONLY_FROM && !requiresEsm()) {
    process.stdout.write(
      `skip NestJS ${major}: its CommonJS apps need Node 20.19+, this is ${process.version}\n`,
    );
    return;
  }
  const nest = ['core', 'common', 'platform-express'].map((name) => `@nestjs/${name}@${major}`);
  const project = await freshProject(join(work, `nest-${major}`), 'commonjs', [
    tarball,
    ...nest,
    'reflect-metadata',
    'rxjs@7',
    'typescript',
    '@types/node@20',
  ]);
  const flags = major >= ESM_ONLY_FROM ? [] : NO_REQUIRE_ESM;
  await requiresEverySubpath(project, subpaths, `beside NestJS ${major}`, flags);
  writeFileSync(join(project, 'app.ts'), limitedNestApp());
  const tsconfig = { compilerOptions: COMPILER_OPTIONS, files: ['app.ts'] };
  writeFileSync(join(project, 'tsconfig.json'), `${JSON.stringify(tsconfig)}\n`);
  const what = `a NestJS ${major} app on TollgateModule and RateLimitGuard, compiled to CommonJS by tsc`;
  const compiled = await runAsync(join(project, 'node_modules', '.bin', 'tsc'), ['-p', project], project);
  if (compiled.status !== 0) return check(false, `${what} compiles`, compiled.output.trim());
  const ran = await runAsync(process.execPath, [...flags, join(project, 'out', 'app.js')], project);
  check(ran.stdout === LIMITED, `${what}, answers 429 after its limit`, ran.output.trim());
}
