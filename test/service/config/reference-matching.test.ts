// The reference's lookup, scenario by scenario: which limit a request descriptor falls under, and its names.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadServiceConfig } from '../../../src/service/config/load.js';
import { Unit } from '../../../src/service/protocol/messages.js';
import { find, findOverride, loadFixtures } from './helpers.js';

const basic = loadFixtures(['basic.yaml']);

describe('basic configuration', () => {
  it('answers nothing for an unknown domain, an empty descriptor or an unknown key', () => {
    assert.equal(find(basic, 'foo_domain', ['key1', 'value1'], ['subkey1', 'x']), undefined);
    assert.equal(find(basic, 'test-domain'), undefined);
    assert.equal(find(basic, 'test-domain', ['nothing', 'here']), undefined);
    assert.deepEqual(basic.domains, ['test-domain']);
    assert.deepEqual(basic.files, ['basic.yaml']);
  });

  it('applies a limit only at the level the request ends on', () => {
    assert.equal(find(basic, 'test-domain', ['key1', 'something']), undefined);
    assert.equal(find(basic, 'test-domain', ['key1', 'value1']), undefined, 'the level has no limit');
    assert.equal(
      find(basic, 'test-domain', ['key2', 'value2'], ['subkey', 'subvalue']),
      undefined,
      'deeper than the tree',
    );
    assert.equal(find(basic, 'test-domain', ['key5', 'value5'], ['subkey5', 'subvalue']), undefined);
    assert.equal(find(basic, 'test-domain', ['key5', 'value5'])?.rule.requestsPerUnit, 15);
    assert.equal(
      find(basic, 'test-domain', ['key5', 'value5'], ['subkey5', 'subvalue5'])?.rule.requestsPerUnit,
      25,
    );
  });

  it('prefers the exact value to the key alone, at every level', () => {
    const keyOnly = find(basic, 'test-domain', ['key1', 'value1'], ['subkey1', 'something']);
    assert.equal(keyOnly?.rule.requestsPerUnit, 5);
    assert.equal(keyOnly?.rule.unit, Unit.SECOND);
    assert.equal(keyOnly?.statsKey, 'test-domain.key1_value1.subkey1');
    assert.equal(keyOnly?.rule.fullKey, 'test-domain.key1_value1.subkey1');
    const exact = find(basic, 'test-domain', ['key1', 'value1'], ['subkey1', 'subvalue1']);
    assert.equal(exact?.rule.requestsPerUnit, 10);
    assert.equal(exact?.statsKey, 'test-domain.key1_value1.subkey1_subvalue1');
    assert.equal(find(basic, 'test-domain', ['key2', 'something'])?.statsKey, 'test-domain.key2');
    assert.equal(find(basic, 'test-domain', ['key2', 'something'])?.rule.unit, Unit.MINUTE);
    assert.equal(find(basic, 'test-domain', ['key2', 'value2'])?.rule.requestsPerUnit, 30);
    assert.equal(
      find(basic, 'test-domain', ['key2', 'value3']),
      undefined,
      'an exact value without a limit wins',
    );
  });

  it('reads every unit, in any case, as epoch-aligned windows (a month is 30 days, a year 365)', () => {
    const cases: [string, Unit, number][] = [
      ['key3', Unit.HOUR, 3_600_000],
      ['key4', Unit.DAY, 86_400_000],
      ['key8', Unit.WEEK, 7 * 86_400_000],
      ['key9', Unit.MONTH, 30 * 86_400_000],
      ['key10', Unit.YEAR, 365 * 86_400_000],
    ];
    for (const [key, unit, windowMs] of cases) {
      const rule = find(basic, 'test-domain', [key, 'foo'])?.rule;
      assert.equal(rule?.unit, unit, key);
      assert.equal(rule?.policies.length, 1);
      assert.equal(rule?.policies[0]?.kind, 'aligned-window');
      assert.equal(rule?.policies[0]?.windowMs, windowMs, key);
      assert.equal(rule?.policies[0]?.limit, rule?.requestsPerUnit);
    }
  });

  it('loads the largest limits the reference takes on its longest units', () => {
    for (const [unit, limit] of [
      ['month', 1_000_000],
      ['year', 4_294_967_295],
    ] as const) {
      const text = `domain: big\ndescriptors:\n  - key: k\n    rate_limit: { unit: ${unit}, requests_per_unit: ${limit} }\n`;
      const config = loadServiceConfig([{ path: 'big.yaml', text }]);
      assert.equal(find(config, 'big', ['k', 'v'])?.rule.requestsPerUnit, limit, unit);
    }
  });

  it('counts each request value apart, keyed by the entries', () => {
    const a = find(basic, 'test-domain', ['key1', 'value1'], ['subkey1', 'a']);
    const b = find(basic, 'test-domain', ['key1', 'value1'], ['subkey1', 'b']);
    assert.equal(a?.rule, b?.rule);
    assert.equal(a?.counterKey, 'key1=value1|subkey1=a');
    assert.notEqual(a?.counterKey, b?.counterKey);
  });

  it('keeps requests_per_unit 0 as a limit of 0, which denies everything', () => {
    const rule = find(basic, 'test-domain', ['banned', 'x'])?.rule;
    assert.equal(rule?.requestsPerUnit, 0);
    assert.equal(rule?.policies[0]?.evaluate(undefined, 1_000, 1).result.allowed, false);
  });

  it('marks unlimited limits, which count nothing', () => {
    const rule = find(basic, 'test-domain', ['key6', 'foo'])?.rule;
    assert.equal(rule?.unlimited, true);
    assert.deepEqual(rule?.policies, []);
    assert.equal(rule?.unit, Unit.UNKNOWN);
    assert.equal(find(basic, 'test-domain', ['key6', 'foo'])?.statsKey, 'test-domain.key6');
  });

  it('names detailed_metric stats after the request values', () => {
    const first = find(basic, 'test-domain', ['key7', 'unspecified_value']);
    assert.equal(first?.rule.requestsPerUnit, 70);
    assert.equal(first?.statsKey, 'test-domain.key7_unspecified_value');
    assert.equal(first?.rule.fullKey, 'test-domain.key7');
    assert.equal(
      find(basic, 'test-domain', ['key7', 'another_value'])?.statsKey,
      'test-domain.key7_another_value',
    );
    assert.equal(
      find(basic, 'test-domain', ['key7', ''])?.statsKey,
      'test-domain.key7_',
      'an empty value keeps its `_`',
    );
  });
});

describe('a descriptor that sets its own limit', () => {
  it('builds it on the fly, named after the entries, never in shadow mode', () => {
    const day = { requestsPerUnit: 10, unit: Unit.DAY };
    assert.equal(findOverride(basic, 'foo_domain', day), undefined, 'not for an unknown domain');
    const match = findOverride(basic, 'test-domain', day, ['key1', 'value1'], ['subkey1', 'something']);
    assert.equal(match?.statsKey, 'test-domain.key1_value1.subkey1_something');
    assert.equal(match?.rule.requestsPerUnit, 10);
    assert.equal(match?.rule.unit, Unit.DAY);
    assert.equal(match?.rule.shadowMode, false);
    assert.equal(match?.rule.name, '');
    assert.equal(match?.rule.policies[0]?.windowMs, 86_400_000);
    const unmatched = findOverride(basic, 'test-domain', day, ['not', 'configured']);
    assert.equal(unmatched?.statsKey, 'test-domain.not_configured', 'whatever the configuration says');
  });

  it('keeps its counter when its limit changes, and counts other values apart', () => {
    const entries: [string, string][] = [
      ['key1', 'value1'],
      ['subkey1', 'something'],
    ];
    const ten = findOverride(basic, 'test-domain', { requestsPerUnit: 10, unit: Unit.HOUR }, ...entries);
    const more = findOverride(basic, 'test-domain', { requestsPerUnit: 42, unit: Unit.HOUR }, ...entries);
    assert.equal(ten?.rule.scope, more?.rule.scope);
    assert.equal(ten?.counterKey, more?.counterKey);
    const other = findOverride(
      basic,
      'test-domain',
      { requestsPerUnit: 42, unit: Unit.HOUR },
      ['key1', 'value1'],
      ['subkey1', 'else'],
    );
    assert.notEqual(other?.counterKey, ten?.counterKey);
    const daily = findOverride(basic, 'test-domain', { requestsPerUnit: 42, unit: Unit.DAY }, ...entries);
    assert.notEqual(daily?.rule.scope, ten?.rule.scope, 'another unit is another window');
  });

  it('refuses a unit the protocol does not have, or a limit that is not a count, as an argument error', () => {
    for (const limit of [
      { requestsPerUnit: 10, unit: Unit.UNKNOWN },
      { requestsPerUnit: 10, unit: 9 as Unit },
      { requestsPerUnit: -1, unit: Unit.SECOND },
      { requestsPerUnit: 1.5, unit: Unit.SECOND },
    ]) {
      assert.throws(() => findOverride(basic, 'test-domain', limit, ['key2', 'x']), {
        code: 'ERR_TOLLGATE_ARGUMENT',
        message: /`limit\.(unit|requests_per_unit)` must be/,
      });
    }
  });
});

describe('wildcards', () => {
  const config = loadFixtures(['wildcard.yaml']);

  it('match every value that starts with the text before a final `*`, as one limit', () => {
    const one = find(config, 'wildcards', ['wild', 'foo1']);
    const two = find(config, 'wildcards', ['wild', 'foo2']);
    assert.equal(one?.rule.requestsPerUnit, 20);
    assert.equal(one?.rule, two?.rule);
    assert.equal(one?.statsKey, 'wildcards.wild_foo*');
    assert.notEqual(one?.counterKey, two?.counterKey, 'without share_threshold, each value counts apart');
    assert.equal(find(config, 'wildcards', ['wild', 'foo'])?.rule.requestsPerUnit, 20);
    assert.equal(find(config, 'wildcards', ['wild', 'bar']), undefined);
  });

  it('are not prefixes without a `*`, nor wildcards with one in the middle', () => {
    assert.equal(find(config, 'wildcards', ['noWild', 'foo1']), undefined);
    assert.equal(find(config, 'wildcards', ['midWild', 'barab']), undefined);
    assert.equal(find(config, 'wildcards', ['midWild', 'bar*b'])?.rule.requestsPerUnit, 23);
    assert.equal(find(config, 'wildcards', ['noVal', 'anything'])?.rule.requestsPerUnit, 22);
  });

  it('come after the exact value and before the key alone, the first loaded first', () => {
    assert.equal(find(config, 'wildcards', ['order', 'abc'])?.rule.requestsPerUnit, 3);
    assert.equal(find(config, 'wildcards', ['order', 'abd'])?.rule.requestsPerUnit, 1);
    assert.equal(find(config, 'wildcards', ['order', 'ax'])?.rule.requestsPerUnit, 2);
    assert.equal(find(config, 'wildcards', ['order', 'b'])?.rule.requestsPerUnit, 4);
  });

  it('lead deeper, and value_to_metric names the request value in stats', () => {
    const match = find(config, 'wildcards', ['path', '/api/users'], ['method', 'GET']);
    assert.equal(match?.rule.requestsPerUnit, 5);
    assert.equal(match?.rule.fullKey, 'wildcards.path_/api/*.method');
    assert.equal(match?.statsKey, 'wildcards.path_/api/users.method');
    assert.equal(find(config, 'wildcards', ['path', '/api/users']), undefined);
    assert.equal(find(config, 'wildcards', ['user', 'alice'])?.statsKey, 'wildcards.user_alice');
    assert.equal(find(config, 'wildcards', ['user', ''])?.statsKey, 'wildcards.user');
  });
});

describe('share_threshold', () => {
  const config = loadFixtures(['share-threshold.yaml']);

  it('counts every value past the wildcard in one counter, named by its pattern', () => {
    const pdf = find(config, 'share', ['files', 'files/a.pdf']);
    const csv = find(config, 'share', ['files', 'files/b.csv']);
    assert.equal(pdf?.rule.requestsPerUnit, 100);
    assert.equal(pdf?.counterKey, csv?.counterKey);
    assert.equal(pdf?.counterKey, 'files=files%2F*');
    assert.equal(pdf?.statsKey, 'share.files_files/*');
    const unshared = find(config, 'share', ['files_private', 'p/1']);
    assert.notEqual(unshared?.counterKey, find(config, 'share', ['files_private', 'p/2'])?.counterKey);
  });

  it('shares at any depth, at each level that asks', () => {
    const nested = find(config, 'share', ['nested', 'parent'], ['files', 'nested/x']);
    assert.equal(nested?.rule.requestsPerUnit, 200);
    assert.equal(nested?.counterKey, 'nested=parent|files=nested%2F*');
    const both = find(config, 'share', ['files', 'top/a'], ['files', 'nested/b']);
    assert.equal(both?.rule.requestsPerUnit, 300);
    assert.equal(both?.counterKey, 'files=top%2F*|files=nested%2F*');
    assert.equal(both?.statsKey, 'share.files_top/*.files_nested/*');
  });

  it('never takes a value that has its own descriptor', () => {
    assert.equal(find(config, 'share', ['file', 'test1'])?.rule.requestsPerUnit, 50);
    assert.equal(find(config, 'share', ['file', 'test2'])?.rule.requestsPerUnit, 100);
    assert.equal(find(config, 'share', ['file', 'test2'])?.counterKey, 'file=test*');
  });

  it('names stats by the pattern over value_to_metric, and within detailed_metric', () => {
    assert.equal(
      find(config, 'share', ['route', 'api/x'], ['method', 'GET'])?.statsKey,
      'share.route_api/*.method',
    );
    const detailed = find(config, 'share', ['service', 'svc/a'], ['endpoint', 'e1']);
    assert.equal(detailed?.statsKey, 'share.service_svc/*.endpoint_e1');
    assert.equal(detailed?.counterKey, 'service=svc%2F*|endpoint=e1');
  });
});

describe('shadow_mode, quota_mode, replaces, metadata', () => {
  const config = loadFixtures(['modes.yaml']);

  it('marks shadow mode per descriptor', () => {
    assert.equal(find(config, 'modes', ['key1', 'value1'], ['subkey1', 'something'])?.rule.shadowMode, false);
    assert.equal(find(config, 'modes', ['key1', 'value1'], ['subkey1', 'subvalue1'])?.rule.shadowMode, true);
    assert.equal(find(config, 'modes', ['key2', 'something'])?.rule.shadowMode, true);
  });

  it('marks quota mode and keeps metadata as written', () => {
    const rule = find(config, 'modes', ['model', 'gpt'])?.rule;
    assert.equal(rule?.quotaMode, true);
    assert.equal(rule?.shadowMode, false);
    assert.deepEqual(rule?.metadata, { name: 'service_1', anything_goes: { nested: [1, 'two'] } });
    assert.equal(find(config, 'modes', ['key2', 'x'])?.rule.metadata, undefined);
  });

  it('keeps names and what each limit replaces', () => {
    assert.equal(find(config, 'modes', ['per_user', 'u'])?.rule.name, 'per-user');
    const vip = find(config, 'modes', ['vip', 'u'])?.rule;
    assert.equal(vip?.name, 'vip');
    assert.deepEqual(vip?.replaces, ['per-user']);
    assert.deepEqual(find(config, 'modes', ['key2', 'x'])?.rule.replaces, []);
  });
});

describe('merged domains', () => {
  it('adds the descriptors of a second file of one domain when asked', () => {
    const config = loadFixtures(['merge-a.yaml', 'merge-b.yaml'], { mergeDomains: true });
    assert.deepEqual(config.domains, ['shared']);
    assert.equal(find(config, 'shared', ['key1', 'value1'])?.rule.requestsPerUnit, 10);
    assert.equal(find(config, 'shared', ['key2', 'value2'])?.rule.requestsPerUnit, 20);
    assert.equal(find(config, 'shared', ['key2', 'value2'])?.rule.source.file, 'merge-b.yaml');
  });
});
