// The error constructors: each gives its code, option and cause, and every message one pointer to its code's section.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  argumentError,
  configError,
  environmentError,
  inContext,
  storeError,
  TollgateError,
  timeoutError,
  waitTimeoutError,
} from '../../src/core/errors.js';
import { pointed } from '../harness/error-pointer.js';

describe('error constructors', () => {
  it('give each error its code, its option when there is one, and the pointer to its code', () => {
    const missing = new Error('Cannot find module');
    const cases: [TollgateError, Partial<TollgateError>][] = [
      [configError('capacity', 'must be a positive integer', 0), { option: 'capacity' }],
      [configError('logger', 'must have warn() and error() methods'), { option: 'logger' }],
      [environmentError('`identifier` is required here', missing, 'identifier'), { option: 'identifier' }],
      [environmentError('createMetrics needs the `prom-client` package', missing), { option: undefined }],
      [argumentError('the identifier must be a non-empty string'), { option: undefined }],
      [storeError('Redis is not connected'), { option: undefined }],
      [timeoutError('Redis did not answer within 250 ms'), {}],
      [waitTimeoutError(2000, 'earlier callers were still waiting'), {}],
    ];
    const messages = cases.map(([error, fields]) => {
      assert.ok(error instanceof TollgateError);
      assert.equal(error.name, 'TollgateError');
      for (const [field, value] of Object.entries(fields))
        assert.equal(error[field as keyof TollgateError], value, field);
      return [error.code, error.message];
    });
    assert.deepEqual(messages, [
      ['ERR_TOLLGATE_CONFIG', pointed('`capacity` must be a positive integer (received 0)')],
      ['ERR_TOLLGATE_CONFIG', pointed('`logger` must have warn() and error() methods')],
      ['ERR_TOLLGATE_CONFIG', pointed('`identifier` is required here')],
      ['ERR_TOLLGATE_CONFIG', pointed('createMetrics needs the `prom-client` package')],
      [
        'ERR_TOLLGATE_ARGUMENT',
        pointed('the identifier must be a non-empty string', 'ERR_TOLLGATE_ARGUMENT'),
      ],
      ['ERR_TOLLGATE_STORE', pointed('Redis is not connected', 'ERR_TOLLGATE_STORE')],
      ['ERR_TOLLGATE_TIMEOUT', pointed('Redis did not answer within 250 ms', 'ERR_TOLLGATE_TIMEOUT')],
      [
        'ERR_TOLLGATE_WAIT_TIMEOUT',
        pointed(
          'the request cannot pass within `maxWaitMs` (2000 ms): earlier callers were still waiting',
          'ERR_TOLLGATE_WAIT_TIMEOUT',
        ),
      ],
    ]);
    assert.equal(cases[2]?.[0].cause, missing);
    assert.equal(
      Object.hasOwn(storeError('Redis is not connected'), 'cause'),
      false,
      'no cause unless one is given',
    );
    assert.equal(storeError('the RedisStore is closed', missing).cause, missing);
  });

  it('inContext frames the message without doubling its pointer, and keeps code, option and cause', () => {
    const original = configError('limit', 'must be a non-negative integer', -1);
    const prefixed = inContext(original, (message) => `policy 2: ${message}`);
    assert.deepEqual(
      [prefixed.code, prefixed.option, prefixed.cause, prefixed.message],
      [
        'ERR_TOLLGATE_CONFIG',
        'limit',
        original,
        pointed('policy 2: `limit` must be a non-negative integer (received -1)'),
      ],
    );
    const placed = inContext(
      argumentError('no tier'),
      (message) => `${message} (@RateLimit on A.b)`,
      '@RateLimit',
    );
    assert.deepEqual(
      [placed.code, placed.option, placed.message],
      [
        'ERR_TOLLGATE_ARGUMENT',
        '@RateLimit',
        pointed('no tier (@RateLimit on A.b)', 'ERR_TOLLGATE_ARGUMENT'),
      ],
    );
  });
});
