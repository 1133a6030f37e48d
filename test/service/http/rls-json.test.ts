// The /json codec: requests read as protobuf's JSON parser reads them, responses written as the reference writes them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  durationJson,
  formatRateLimitResponse,
  parseRateLimitRequest,
} from '../../../src/service/http/rls-json.js';
import { Code, Unit } from '../../../src/service/protocol/messages.js';

function refused(text: string, reason: RegExp): void {
  assert.throws(
    () => parseRateLimitRequest(text),
    (error: { code?: string; message: string }) => {
      assert.equal(error.code, 'ERR_TOLLGATE_ARGUMENT');
      assert.match(error.message, reason);
      return true;
    },
  );
}

describe('parseRateLimitRequest', () => {
  it('reads camelCase and snake_case names, enums by name or number, integers as numbers or strings', () => {
    const camel = parseRateLimitRequest(
      JSON.stringify({
        domain: 'edge',
        descriptors: [
          {
            entries: [{ key: 'path', value: '/a' }],
            limit: { requestsPerUnit: 7, unit: 'MINUTE' },
            hitsAddend: 0,
          },
        ],
        hitsAddend: 3,
      }),
    );
    const snake = parseRateLimitRequest(
      JSON.stringify({
        domain: 'edge',
        descriptors: [
          {
            entries: [{ key: 'path', value: '/a' }],
            limit: { requests_per_unit: '7', unit: 2 },
            hits_addend: '0',
          },
        ],
        hits_addend: '3',
      }),
    );
    const expected = {
      domain: 'edge',
      descriptors: [
        {
          entries: [{ key: 'path', value: '/a' }],
          limit: { requestsPerUnit: 7, unit: Unit.MINUTE },
          hitsAddend: 0,
        },
      ],
      hitsAddend: 3,
    };
    assert.deepEqual(camel, expected);
    assert.deepEqual(snake, expected);
  });

  it('leaves unset fields at their defaults: null is unset, a key-only entry has the empty value', () => {
    assert.deepEqual(
      parseRateLimitRequest(
        '{"domain":"d","descriptors":[{"entries":[{"key":"perday"}],"hitsAddend":null}],"hitsAddend":null}',
      ),
      { domain: 'd', descriptors: [{ entries: [{ key: 'perday', value: '' }] }], hitsAddend: 0 },
    );
    assert.deepEqual(parseRateLimitRequest('{}'), { domain: '', descriptors: [], hitsAddend: 0 });
  });

  it('refuses what protobuf refuses, naming the field', () => {
    refused('}', /not JSON/);
    refused('', /not JSON/);
    refused('[]', /the request must be a JSON object/);
    refused('{"domain":"d","extra":1}', /unknown field "extra"/);
    refused('{"hitsAddend":1,"hits_addend":2}', /"hitsAddend" twice/);
    refused('{"domain":5}', /domain must be a string/);
    refused('{"descriptors":{}}', /descriptors must be an array/);
    refused(
      '{"descriptors":[{"entries":[{"key":1}]}]}',
      /descriptors\[0\]\.entries\[0\]\.key must be a string/,
    );
    refused(
      '{"descriptors":[{"limit":{"unit":"FORTNIGHT"}}]}',
      /descriptors\[0\]\.limit\.unit must be one of/,
    );
    refused('{"hitsAddend":-1}', /hitsAddend must be an integer from 0 to 4294967295/);
    refused('{"hitsAddend":4294967296}', /hitsAddend must be an integer/);
    refused('{"hitsAddend":1.5}', /hitsAddend must be an integer/);
    refused('{"descriptors":[{"hitsAddend":"x"}]}', /descriptors\[0\]\.hitsAddend must be an integer/);
    refused('{"__proto__":{}}', /unknown field "__proto__"/);
  });
});

describe('formatRateLimitResponse', () => {
  it('writes camelCase names, enum names, durations as seconds, and leaves zero values out', () => {
    const text = formatRateLimitResponse({
      overallCode: Code.OVER_LIMIT,
      statuses: [
        {
          code: Code.OVER_LIMIT,
          currentLimit: { name: '', requestsPerUnit: 5, unit: Unit.SECOND },
          limitRemaining: 0,
          durationUntilResetMs: 1500,
        },
        {
          code: Code.OK,
          currentLimit: { name: 'named', requestsPerUnit: 20, unit: Unit.MINUTE },
          limitRemaining: 19,
          durationUntilResetMs: 42_000,
        },
        { code: Code.OK, limitRemaining: 4294967295 },
      ],
      responseHeadersToAdd: [{ key: 'RateLimit-Limit', value: '5' }],
      requestHeadersToAdd: [],
      rawBody: new TextEncoder().encode('slow down'),
    });
    assert.equal(
      text,
      JSON.stringify({
        overallCode: 'OVER_LIMIT',
        statuses: [
          {
            code: 'OVER_LIMIT',
            currentLimit: { requestsPerUnit: 5, unit: 'SECOND' },
            durationUntilReset: '1.500s',
          },
          {
            code: 'OK',
            currentLimit: { name: 'named', requestsPerUnit: 20, unit: 'MINUTE' },
            limitRemaining: 19,
            durationUntilReset: '42s',
          },
          { code: 'OK', limitRemaining: 4294967295 },
        ],
        responseHeadersToAdd: [{ key: 'RateLimit-Limit', value: '5' }],
        rawBody: Buffer.from('slow down').toString('base64'),
      }),
    );
  });

  it('writes a response with no code as an empty object, as the reference does', () => {
    assert.equal(
      formatRateLimitResponse({
        overallCode: Code.UNKNOWN,
        statuses: [],
        responseHeadersToAdd: [],
        requestHeadersToAdd: [],
      }),
      '{}',
    );
  });

  it('writes durations with 0 or 3 decimals', () => {
    assert.equal(durationJson(0), '0s');
    assert.equal(durationJson(1), '0.001s');
    assert.equal(durationJson(59_999), '59.999s');
    assert.equal(durationJson(3_600_000), '3600s');
  });
});
