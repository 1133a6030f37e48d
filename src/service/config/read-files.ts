// Reads configuration files from disk: a file as given, a directory as its YAML files in name order.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { environmentError } from '../../core/errors.js';
import { type ConfigFile, loadServiceConfig, type ServiceConfigOptions } from './load.js';
import type { ServiceConfig } from './types.js';

const YAML_FILE = /\.ya?ml$/i;

/**
 * The files at `paths`, in order: a file as given, a directory as its `*.yaml` and `*.yml` files sorted by name (not
 * its subdirectories, nor names starting with `.`, such as the `..data` of a Kubernetes ConfigMap's mount).
 */
export async function readConfigFiles(paths: readonly string[]): Promise<ConfigFile[]> {
  const files: ConfigFile[] = [];
  for (const path of paths) {
    for (const file of await filesAt(path)) files.push({ path: file, text: await readText(file) });
  }
  return files;
}

/** `loadServiceConfig` of the files at `paths` (see `readConfigFiles`). */
export async function readServiceConfig(
  paths: readonly string[],
  options: ServiceConfigOptions = {},
): Promise<ServiceConfig> {
  return loadServiceConfig(await readConfigFiles(paths), options);
}

async function filesAt(path: string): Promise<string[]> {
  const info = await stat(path).catch((cause: unknown) => unreadable(path, cause));
  if (!info.isDirectory()) return [path];
  const names = (await readdir(path).catch((cause: unknown) => unreadable(path, cause))).sort();
  const files: string[] = [];
  for (const name of names) {
    if (name.startsWith('.') || !YAML_FILE.test(name)) continue;
    const file = join(path, name);
    if ((await stat(file).catch((cause: unknown) => unreadable(file, cause))).isFile()) files.push(file);
  }
  return files;
}

async function readText(file: string): Promise<string> {
  return readFile(file, 'utf8').catch((cause: unknown) => unreadable(file, cause));
}

function unreadable(path: string, cause: unknown): never {
  const reason = cause instanceof Error ? cause.message : String(cause);
  throw environmentError(`cannot read the rate limit configuration at ${path}: ${reason}`, cause, 'config');
}
