// Scopes that survive a reload and never collide, and configurations read from disk as the reference reads them.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TollgateError } from '../../../src/core/errors.js';
import { loadServiceConfig } from '../../../src/service/config/load.js';
import { readConfigFiles, readServiceConfig } from '../../../src/service/config/read-files.js';
import type { ServiceConfig } from '../../../src/service/config/types.js';
import { find, fixture } from './helpers.js';

const load = (text: string, domain = 'd'): ServiceConfig =>
  loadServiceConfig([{ path: `${domain}.yaml`, text }]);
const scopeOf = (config: ServiceConfig, domain: string, ...pairs: [string, string][]) =>
  find(config, domain, ...pairs)?.rule.scope;
const limit = (unit: string, rpu: number) => `rate_limit: { unit: ${unit}, requests_per_unit: ${rpu} }`;
const tree = (...lines: string[]) => ['domain: d', 'descriptors:', ...lines].join('\n');

describe('scopes', () => {
  it('are the same on every load of the same file', () => {
    const first = loadServiceConfig([fixture('basic.yaml'), fixture('tollgate.yaml')]);
    const again = loadServiceConfig([fixture('basic.yaml'), fixture('tollgate.yaml')]);
    for (const [domain, pair] of [
      ['test-domain', ['key2', 'x']],
      ['test-domain', ['key7', 'x']],
      ['edge', ['api_key', 'x']],
      ['edge', ['path', '/search']],
    ] as const) {
      assert.equal(scopeOf(first, domain, [...pair]), scopeOf(again, domain, [...pair]));
    }
  });

  it('keep counts when a limit changes, and start afresh when its unit or its policies change', () => {
    const base = scopeOf(load(tree('  - key: k', `    ${limit('minute', 10)}`)), 'd', ['k', 'v']);
    assert.equal(scopeOf(load(tree('  - key: k', `    ${limit('minute', 99)}`)), 'd', ['k', 'v']), base);
    assert.equal(
      scopeOf(load(tree('  - key: other', '  - key: k', `    ${limit('minute', 5)}`)), 'd', ['k', 'v']),
      base,
    );
    assert.notEqual(scopeOf(load(tree('  - key: k', `    ${limit('hour', 10)}`)), 'd', ['k', 'v']), base);
    const bucket = (capacity: number) =>
      `    tollgate: { policies: [{ token_bucket: { capacity: ${capacity}, refill_per_second: 1 } }] }`;
    const withBucket = scopeOf(load(tree('  - key: k', bucket(5))), 'd', ['k', 'v']);
    assert.notEqual(withBucket, base);
    assert.equal(scopeOf(load(tree('  - key: k', bucket(50))), 'd', ['k', 'v']), withBucket);
  });

  it("differ for different paths and domains, even where the reference's names would not", () => {
    const config = load(
      tree(
        '  - key: a.b',
        `    ${limit('second', 1)}`,
        '  - key: a',
        '    descriptors:',
        '      - key: b',
        `        ${limit('second', 1)}`,
        '  - key: a',
        '    value: b',
        `    ${limit('second', 1)}`,
      ),
    );
    const scopes = [
      scopeOf(config, 'd', ['a.b', 'x']),
      scopeOf(config, 'd', ['a', 'x'], ['b', 'y']),
      scopeOf(config, 'd', ['a', 'b']),
    ];
    assert.equal(new Set(scopes).size, 3, String(scopes));
    const other = load(
      tree('  - key: a', '    value: b', `    ${limit('second', 1)}`).replace('domain: d', 'domain: e'),
      'e',
    );
    assert.notEqual(scopeOf(other, 'e', ['a', 'b']), scopes[2]);
  });

  it('are valid store scopes, readable when short and plain', () => {
    const config = load(
      tree(
        '  - key: k',
        `    ${limit('second', 1)}`,
        '  - key: path',
        '    value: /api/*',
        `    ${limit('second', 1)}`,
      ),
    );
    assert.equal(scopeOf(config, 'd', ['k', 'v']), 'd.k:aligned-window.second');
    assert.match(scopeOf(config, 'd', ['path', '/api/x']) ?? '', /^rls-[A-Za-z0-9_-]{16}$/);
  });
});

describe('reading from disk', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tollgate-config-'));
    await writeFile(join(dir, 'b.yaml'), 'domain: b\n');
    await writeFile(join(dir, 'a.yml'), 'domain: a\n');
    await writeFile(join(dir, '.hidden.yaml'), 'domain: hidden\n');
    await writeFile(join(dir, 'notes.txt'), 'not yaml');
    await mkdir(join(dir, 'nested.yaml'));
    await writeFile(join(dir, 'nested.yaml', 'c.yaml'), 'domain: c\n');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("loads a directory's YAML files sorted by name, and a file as given", async () => {
    const files = await readConfigFiles([dir, join(dir, 'nested.yaml', 'c.yaml')]);
    assert.deepEqual(
      files.map((file) => file.path),
      [join(dir, 'a.yml'), join(dir, 'b.yaml'), join(dir, 'nested.yaml', 'c.yaml')],
    );
    const config = await readServiceConfig([dir]);
    assert.deepEqual(config.domains, ['a', 'b']);
  });

  it('names the path it cannot read', async () => {
    const missing = join(dir, 'missing.yaml');
    await assert.rejects(readServiceConfig([missing]), (error: unknown) => {
      assert.ok(error instanceof TollgateError);
      assert.equal(error.code, 'ERR_TOLLGATE_CONFIG');
      assert.match(error.message, /cannot read the rate limit configuration at .*missing\.yaml/);
      return true;
    });
  });

  it('names the file of a fault in a directory', async () => {
    await writeFile(join(dir, 'z.yaml'), 'domain: a\n');
    await assert.rejects(readServiceConfig([dir]), /z\.yaml:1: `domain` "a" is already loaded from .*a\.yml/);
    await rm(join(dir, 'z.yaml'));
  });
});
