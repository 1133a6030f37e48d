// Shared by the configuration's tests: fixtures by name, descriptors from pairs, the message of a refused load.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TollgateError } from '../../../src/core/errors.js';
import {
  type ConfigFile,
  loadServiceConfig,
  type ServiceConfigOptions,
} from '../../../src/service/config/load.js';
import type { LimitMatch, ServiceConfig } from '../../../src/service/config/types.js';
import type { LimitOverride } from '../../../src/service/protocol/messages.js';

/** A file of test/fixtures/service/, named by its file name in messages. */
export function fixture(name: string): ConfigFile {
  return {
    path: name,
    text: readFileSync(new URL(`../../fixtures/service/${name}`, import.meta.url), 'utf8'),
  };
}

export function loadFixtures(names: readonly string[], options?: ServiceConfigOptions): ServiceConfig {
  return loadServiceConfig(names.map(fixture), options);
}

/** `find(config, 'domain', ['key1', 'value1'], ['subkey1', 'x'])`. */
export function find(
  config: ServiceConfig,
  domain: string,
  ...pairs: [string, string][]
): LimitMatch | undefined {
  return config.findLimit(domain, { entries: pairs.map(([key, value]) => ({ key, value })) });
}

export function findOverride(
  config: ServiceConfig,
  domain: string,
  limit: LimitOverride,
  ...pairs: [string, string][]
): LimitMatch | undefined {
  return config.findLimit(domain, { entries: pairs.map(([key, value]) => ({ key, value })), limit });
}

/** The message (without its pointer to the docs) of the configuration error loading `files` throws. */
export function loadError(files: readonly ConfigFile[], options?: ServiceConfigOptions): string {
  try {
    loadServiceConfig(files, options);
  } catch (error) {
    assert.ok(error instanceof TollgateError, String(error));
    assert.equal(error.code, 'ERR_TOLLGATE_CONFIG');
    return error.message.replace(/ \(see tollgate\/docs\/errors\.md#err_tollgate_config\)$/, '');
  }
  return assert.fail('the configuration loaded');
}

/** The message of loading one file `text` named `name`. */
export function textError(name: string, text: string): string {
  return loadError([{ path: name, text }]);
}
