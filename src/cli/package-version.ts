// tollgate's version, read at run time from the package's own package.json, so it cannot disagree with the release.
import { readFileSync } from 'node:fs';

/** The package root is two levels above this module, both in src/cli/ and in dist/cli/. */
const MANIFEST = new URL('../../package.json', import.meta.url);

export function packageVersion(): string {
  const { version } = JSON.parse(readFileSync(MANIFEST, 'utf8')) as { version?: unknown };
  if (typeof version !== 'string') throw new Error(`${MANIFEST.pathname} has no version`);
  return version;
}
