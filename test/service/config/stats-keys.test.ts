// Stats keys stay short whatever a request sends: a long part becomes a readable prefix and a hash.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadServiceConfig } from '../../../src/service/config/load.js';

const CONFIG = `
domain: api
descriptors:
  - key: user
    detailed_metric: true
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: ${'k'.repeat(70)}
    value: ${'v'.repeat(70)}
    rate_limit: { unit: minute, requests_per_unit: 5 }
`;

describe('stats keys', () => {
  const config = loadServiceConfig([{ path: 'api.yaml', text: CONFIG }]);
  const statsKeyOf = (key: string, value: string) =>
    config.findLimit('api', { entries: [{ key, value }] })?.statsKey;

  it('keep a part of up to 64 characters as it is', () => {
    const value = 'a'.repeat(64 - 'user_'.length);
    assert.equal(statsKeyOf('user', value), `api.user_${value}`);
  });

  it('write a longer part as its start, `~` and 8 characters of its hash: distinct, stable, short', () => {
    const one = statsKeyOf('user', `${'x'.repeat(500)}1`);
    const two = statsKeyOf('user', `${'x'.repeat(500)}2`);
    assert.match(one ?? '', /^api\.user_x+~[\w-]{8}$/);
    assert.equal(one?.length, 'api.'.length + 64);
    assert.notEqual(one, two);
    assert.equal(statsKeyOf('user', `${'x'.repeat(500)}1`), one);
  });

  it('shorten a configured part alike, so a configured limit still measures under its own key', () => {
    const match = config.findLimit('api', { entries: [{ key: 'k'.repeat(70), value: 'v'.repeat(70) }] });
    assert.equal(match?.statsKey, match?.rule.fullKey);
    assert.equal(match?.rule.fullKey.length, 'api.'.length + 64);
  });

  it('bound a whole key of many parts, as an override of many entries sends', () => {
    const entries = Array.from({ length: 50 }, (_, i) => ({ key: `key${i}`, value: 'v'.repeat(50) }));
    const match = config.findLimit('api', {
      entries,
      limit: { requestsPerUnit: 5, unit: 3 },
    });
    assert.ok(match !== undefined);
    assert.ok(match.statsKey.length <= 256, `${match.statsKey.length} characters`);
    assert.match(match.statsKey, /^api\.key0_v+\.key1_v+.*~[\w-]{8}$/);
  });
});
