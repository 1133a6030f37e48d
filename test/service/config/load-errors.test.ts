// Every file the reference refuses is refused, with its file, its line and the key at fault.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadServiceConfig } from '../../../src/service/config/load.js';
import { fixture, loadError, textError } from './helpers.js';

/** A file of `lines`, so each case's line numbers read off its array. */
const file = (...lines: string[]) => `${lines.join('\n')}\n`;

describe('refused as the reference refuses', () => {
  it('a file that is not YAML', () => {
    assert.match(
      textError('bad.yaml', file('domain: d', 'descriptors:', '  - key: [a')),
      /^bad\.yaml:\d: is not valid YAML: /,
    );
    assert.match(
      textError('twice.yaml', file('domain: d', 'descriptors: []', 'domain: e')),
      /^twice\.yaml:3: is not valid YAML: /,
    );
  });

  it('a file that is not a map', () => {
    assert.equal(
      textError('list.yaml', file('- a', '- b')),
      'list.yaml:1: must be a map of `domain` and `descriptors`',
    );
  });

  it('a key that is not a string', () => {
    const text = file('domain: d', 'descriptors:', '  - key: k', '    0.25: x');
    assert.equal(
      textError('non_string_key.yaml', text),
      'non_string_key.yaml:4: has a key that is not a string (received 0.25)',
    );
  });

  it('an unknown key, with the known key it misspells', () => {
    const text = file('domain: d', 'descriptors:', '  - key: k', '    ratelimit:', '      unit: second');
    assert.equal(
      textError('misspelled.yaml', text),
      'misspelled.yaml:4: `ratelimit` is not a known key (did you mean `rate_limit`?)',
    );
    const deeper = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      unit: second',
      '      requestsperunit: 5',
    );
    assert.equal(
      textError('misspelled2.yaml', deeper),
      'misspelled2.yaml:6: `requestsperunit` is not a known key (did you mean `requests_per_unit`?)',
    );
    assert.equal(
      textError('x.yaml', file('domain: d', 'limits: 1')),
      'x.yaml:2: `limits` is not a known key',
    );
  });

  it('a list of anything but maps', () => {
    const text = file('domain: d', 'descriptors:', '  - key: k', '  - a');
    assert.equal(
      textError('non_map_list.yaml', text),
      'non_map_list.yaml:4: `descriptors` must list maps only (received "a")',
    );
  });

  it('a leaf that is not a string, a whole number or a boolean', () => {
    const text = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      unit: second',
      '      requests_per_unit: 1.5',
    );
    assert.equal(
      textError('float.yaml', text),
      'float.yaml:6: `requests_per_unit` must be a string, a whole number, true or false (received 1.5)',
    );
  });

  it('a field of the wrong type', () => {
    const negative = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      unit: second',
      '      requests_per_unit: -1',
    );
    assert.equal(
      textError('neg.yaml', negative),
      'neg.yaml:6: `rate_limit.requests_per_unit` must be a whole number from 0 to 4294967295 (received -1)',
    );
    const quoted = file('domain: d', 'descriptors:', '  - key: k', '    shadow_mode: "true"');
    assert.equal(
      textError('bool.yaml', quoted),
      'bool.yaml:4: `shadow_mode` must be true or false (received "true")',
    );
    const scalarList = file('domain: d', 'descriptors: none');
    assert.equal(
      textError('list.yaml', scalarList),
      'list.yaml:2: `descriptors` must be a list, not a scalar',
    );
  });

  it('an empty domain', () => {
    assert.equal(
      textError('empty_domain.yaml', file('descriptors: []')),
      'empty_domain.yaml:1: `domain` must be a non-empty string',
    );
    assert.equal(
      textError('empty_domain.yaml', file('# limits', 'domain: ""')),
      'empty_domain.yaml:2: `domain` must be a non-empty string',
    );
    assert.equal(textError('empty.yaml', ''), 'empty.yaml:1: `domain` must be a non-empty string');
  });

  it('a domain in two files, unless they are merged', () => {
    const twice = [fixture('merge-a.yaml'), fixture('merge-b.yaml')];
    assert.equal(
      loadError(twice),
      'merge-b.yaml:1: `domain` "shared" is already loaded from merge-a.yaml (a domain is one file, unless `mergeDomains` is set)',
    );
    assert.equal(
      loadError([fixture('merge-a.yaml'), fixture('merge-a.yaml')], { mergeDomains: true }),
      "merge-a.yaml:3: `key` makes a duplicate descriptor composite key 'shared.key1_value1' (first at merge-a.yaml:3)",
    );
  });

  it('an empty key', () => {
    const text = file('domain: d', 'descriptors:', '  - value: v', '    rate_limit: { unit: second }');
    assert.equal(textError('empty_key.yaml', text), 'empty_key.yaml:3: `key` must be a non-empty string');
  });

  it('a key and value repeated at one level', () => {
    const text = file(
      'domain: test-domain',
      'descriptors:',
      '  - key: key1',
      '    value: value1',
      '  - key: key1',
      '    value: value1',
    );
    assert.equal(
      textError('duplicate_key.yaml', text),
      "duplicate_key.yaml:5: `key` makes a duplicate descriptor composite key 'test-domain.key1_value1' (first at duplicate_key.yaml:3)",
    );
    const otherUnit = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit: { unit: second }',
      '  - key: k',
      '    rate_limit: { unit: day }',
    );
    assert.match(
      textError('unit.yaml', otherUnit),
      /^unit\.yaml:5: `key` makes a duplicate descriptor composite key 'd\.k'/,
    );
    const composite = file('domain: d', 'descriptors:', '  - key: a_b', '  - key: a', '    value: b');
    assert.match(textError('composite.yaml', composite), /^composite\.yaml:4: .* 'd\.a_b'/);
  });

  it('a unit that is not one', () => {
    const text = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      unit: fortnight',
      '      requests_per_unit: 5',
    );
    assert.equal(
      textError('limits.yaml', text),
      'limits.yaml:5: `rate_limit.unit` must be one of second, minute, hour, day, week, month, year (received "fortnight")',
    );
    const missing = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      requests_per_unit: 5',
    );
    assert.match(
      textError('limits.yaml', missing),
      /^limits\.yaml:4: `rate_limit\.unit` must be one of .* \(received ""\)$/,
    );
    const unknown = file('domain: d', 'descriptors:', '  - key: k', '    rate_limit: { unit: unknown }');
    assert.match(textError('limits.yaml', unknown), /^limits\.yaml:4: `rate_limit\.unit` must be one of/);
  });

  it('unlimited with a unit, but not with an invalid one', () => {
    const text = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      unlimited: true',
      '      unit: second',
    );
    assert.equal(
      textError('unlimited_with_unit.yaml', text),
      'unlimited_with_unit.yaml:6: `rate_limit.unit` must not be set when `unlimited` is true (received "second")',
    );
    const invalid = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit: { unlimited: true, unit: foo }',
    );
    assert.equal(
      loadServiceConfig([{ path: 'ok.yaml', text: invalid }]).findLimit('d', {
        entries: [{ key: 'k', value: 'v' }],
      })?.rule.unlimited,
      true,
    );
  });

  it('an empty replaces entry, or one that names its own limit', () => {
    const empty = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      unit: second',
      '      replaces:',
      '        - name: ""',
    );
    assert.equal(
      textError('replaces_empty.yaml', empty),
      'replaces_empty.yaml:7: `rate_limit.replaces[0].name` must be a non-empty string',
    );
    const self = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      name: me',
      '      unit: second',
      '      replaces:',
      '        - name: other',
      '        - name: me',
    );
    assert.equal(
      textError('replaces_self.yaml', self),
      'replaces_self.yaml:9: `rate_limit.replaces[1].name` must not name this limit itself (received "me")',
    );
  });

  it('share_threshold on a value without a wildcard', () => {
    const text = file(
      'domain: d',
      'descriptors:',
      '  - key: files',
      '    value: docs',
      '    share_threshold: true',
    );
    assert.equal(
      textError('share.yaml', text),
      "share.yaml:5: `share_threshold` needs a wildcard `value` ending in '*' (the key is 'files_docs')",
    );
  });

  it('a `tollgate:` block anywhere but at the top or on a descriptor', () => {
    const text = file(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      unit: second',
      '      tollgate: {}',
    );
    assert.equal(textError('misplaced.yaml', text), 'misplaced.yaml:6: `tollgate` is not a known key');
  });
});

describe('accepted as the reference accepts', () => {
  it('a known key at an unexpected level, free-form metadata, YAML 1.1 booleans, anchors and merges', () => {
    const text = file(
      'domain: d',
      'unit: ignored',
      'value: &minute { unit: minute, requests_per_unit: 7 }',
      'descriptors:',
      '  - key: k',
      '    name: ignored',
      '    shadow_mode: yes',
      '    metadata: { whatever: { keys: 1 } }',
      '    rate_limit:',
      '      <<: *minute',
      '      requests_per_unit: 9',
    );
    const config = loadServiceConfig([{ path: 'lenient.yaml', text }]);
    const rule = config.findLimit('d', { entries: [{ key: 'k', value: 'v' }] })?.rule;
    assert.equal(rule?.requestsPerUnit, 9, "the map's own key wins over a merged one");
    assert.equal(rule?.unit, 2);
    assert.equal(rule?.shadowMode, true);
  });

  it('the first document of a file that holds several', () => {
    const config = loadServiceConfig([{ path: 'docs.yaml', text: file('domain: a', '---', 'domain: b') }]);
    assert.deepEqual(config.domains, ['a']);
  });

  it('numbers and booleans as key and value text, as written', () => {
    const text = file(
      'domain: 42',
      'descriptors:',
      '  - key: 10',
      '    value: 010',
      '    rate_limit: { unit: second, requests_per_unit: 1 }',
    );
    const config = loadServiceConfig([{ path: 'numbers.yaml', text }]);
    assert.deepEqual(config.domains, ['42']);
    assert.equal(
      config.findLimit('42', { entries: [{ key: '10', value: '010' }] })?.rule.fullKey,
      '42.10_010',
    );
  });
});
