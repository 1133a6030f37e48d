// An unknown option is refused by name, with the nearest known option when one is close enough to be the intended.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { knownKeys } from '../../src/core/validate.js';
import { withoutPointer } from '../harness/error-pointer.js';

const KNOWN = ['windowMs', 'limit', 'scope', 'store', 'skipFailedRequests', 'skipSuccessfulRequests', 'cost'];

/** The refusal's own words, up to the pointer every message ends with. */
function refusal(options: object, renamed?: Record<string, string>): string {
  try {
    knownKeys('rateLimit', options, KNOWN, renamed);
  } catch (error) {
    assert.equal((error as { code?: string }).code, 'ERR_TOLLGATE_CONFIG');
    return withoutPointer(error);
  }
  return assert.fail('expected a refusal');
}

describe('knownKeys', () => {
  it('lets known options through, whatever their values', () => {
    knownKeys('rateLimit', { windowMs: undefined, limit: 5, scope: 'api' }, KNOWN);
    knownKeys('rateLimit', {}, KNOWN);
  });

  it('suggests the nearest known option: case, a missing or extra letter, a swap, a substitution', () => {
    const cases: [string, string][] = [
      ['windowMS', 'windowMs'], // case only
      ['windowsMs', 'windowMs'], // one letter extra
      ['limt', 'limit'], // one letter missing
      ['lmiit', 'limit'], // two neighbours swapped: one edit
      ['scopes', 'scope'],
      ['skipFailedRequest', 'skipFailedRequests'],
      ['skipSucessfulRequests', 'skipSuccessfulRequests'],
      ['cots', 'cost'],
      ['window', 'windowMs'], // two letters missing from six: within a third
    ];
    for (const [typo, meant] of cases)
      assert.equal(
        refusal({ [typo]: 1 }),
        `\`${typo}\` is not an option of rateLimit; did you mean \`${meant}\`?`,
        typo,
      );
  });

  it('suggests nothing when no known option is close (at most one edit per three letters)', () => {
    for (const typo of ['foo', 'max', 'timeWindow', 'requestsPerSecond', 'lim'])
      assert.equal(refusal({ [typo]: 1 }), `\`${typo}\` is not an option of rateLimit`, typo);
  });

  it('picks the closest of several candidates, and the first of equals', () => {
    // 'stope' is one edit from both 'scope' and 'store': the first listed wins.
    assert.match(refusal({ stope: 1 }), /did you mean `scope`\?$/);
    assert.match(refusal({ stor: 1 }), /did you mean `store`\?$/);
  });

  it('names what to write instead of an option taken elsewhere, and advises on a typo of one', () => {
    const elsewhere = { max: 'renamed to `limit`', keyGenerator: 'write `identifier`' };
    assert.equal(refusal({ max: 5 }, elsewhere), '`max` is not an option of rateLimit (renamed to `limit`)');
    assert.equal(
      refusal({ keyGenerater: 5 }, elsewhere),
      '`keyGenerater` is not an option of rateLimit; did you mean `keyGenerator`? (write `identifier`)',
    );
    assert.equal(
      refusal({ limt: 5 }, elsewhere),
      '`limt` is not an option of rateLimit; did you mean `limit`?',
    );
  });

  it('names the first unknown key, as the option at fault', () => {
    assert.throws(() => knownKeys('rateLimit', { limit: 1, limt: 2, foo: 3 }, KNOWN), { option: 'limt' });
  });
});
