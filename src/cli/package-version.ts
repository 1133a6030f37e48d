// tollgate's version, read at run time from the package's own package.json, so it cannot disagree with the release.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../core/module-location.js';

export function packageVersion(): string {
  const manifest = join(packageRoot(), 'package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
  if (typeof version !== 'string') throw new Error(`${manifest} has no version`);
  return version;
}
