// Bucket key parts: scope validation, the default scope's fingerprint, identifier encoding, and parsing keys back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixedWindow, slidingWindow, TollgateError, tokenBucket } from '../../src/index.js';
import {
  bucketKeys,
  defaultScope,
  encodeIdentifier,
  parseBucketKey,
  scopeNamed,
  validateScope,
} from '../../src/stores/key.js';
import { pointed, withoutPointer } from '../harness/error-pointer.js';

const SCOPE_RULE =
  /^`scope` must be 1-64 characters of A-Z, a-z, 0-9, "\.", "_", ":" or "-" \(received .*\) \(see tollgate\/docs\/errors\.md#err_tollgate_config\)$/;

describe('validateScope', () => {
  it('accepts 1 to 64 characters of the allowed set, unchanged', () => {
    for (const scope of ['a', 'x'.repeat(64), 'api:v1.read_write-2', 'ABC.xyz:09'])
      assert.equal(validateScope(scope), scope);
  });

  it('refuses anything else with a configuration error naming the rule and the value', () => {
    assert.throws(() => validateScope('a b'), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'scope',
      message: pointed(
        '`scope` must be 1-64 characters of A-Z, a-z, 0-9, ".", "_", ":" or "-" (received "a b")',
      ),
    });
    for (const scope of ['', 'x'.repeat(65), 'a|b', '{a}', 'a/b', 'é', 5, null, undefined])
      assert.throws(() => validateScope(scope), { code: 'ERR_TOLLGATE_CONFIG', message: SCOPE_RULE });
  });
});

describe('defaultScope', () => {
  // The default scope names the buckets a Redis store keeps across deploys: it must not drift between versions.
  it('is a fixed hash of the policies: `s-` and 8 base64url characters', () => {
    assert.equal(defaultScope([fixedWindow({ limit: 5, windowMs: '1m' })]), 's-lww-Q0Fc');
    const two = [
      tokenBucket({ capacity: 10, refillPerSecond: 1 }),
      fixedWindow({ limit: 100, windowMs: '1h' }),
    ];
    assert.equal(defaultScope(two), 's-UjE1FEr-');
  });

  it('is the same for equal policies built twice', () => {
    const make = () => [slidingWindow({ limit: 3, windowMs: '10s', name: 'burst' })];
    assert.equal(defaultScope(make()), defaultScope(make()));
  });

  it('differs when the kind, the name or the parameters differ', () => {
    const base = defaultScope([fixedWindow({ limit: 5, windowMs: 1000 })]);
    assert.notEqual(defaultScope([slidingWindow({ limit: 5, windowMs: 1000, name: 'fixed-window' })]), base);
    assert.notEqual(defaultScope([fixedWindow({ limit: 5, windowMs: 1000, name: 'other' })]), base);
    assert.notEqual(defaultScope([fixedWindow({ limit: 6, windowMs: 1000 })]), base);
    assert.notEqual(defaultScope([fixedWindow({ limit: 5, windowMs: 1001 })]), base);
  });

  it('keeps parameters and policies apart, so digits cannot regroup into another limit', () => {
    // 1 per 23 ms and 12 per 3 ms would both read "123" if the parameters were run together.
    assert.equal(defaultScope([fixedWindow({ limit: 1, windowMs: 23 })]), 's-dnEfYplS');
    assert.equal(defaultScope([fixedWindow({ limit: 12, windowMs: 3 })]), 's-aFBzP5Px');
    const a = fixedWindow({ limit: 1, windowMs: 1000, name: 'a' });
    const b = fixedWindow({ limit: 1, windowMs: 1000, name: 'b' });
    assert.notEqual(defaultScope([a, b]), defaultScope([b, a]));
  });
});

describe('encodeIdentifier', () => {
  it('keeps plain identifiers of up to 64 characters as they are', () => {
    for (const id of ['a', 'user-42', '10.0.0.1', '::1', 'user@example.com', 'a/b+c=d_e.f:g', 'x'.repeat(64)])
      assert.equal(encodeIdentifier(id), id);
  });

  it('hashes anything else to `~` and 27 base64url characters', () => {
    assert.equal(encodeIdentifier('a b'), '~yGh6CKpdbtIEQyj6aml6uOltw0K');
    assert.equal(encodeIdentifier('{tag}'), '~WuILHIMPERH-5jWqLNaFRtVgYU0');
    assert.equal(encodeIdentifier('user@example.com '), '~WJyXn55kCLXj_v59cKEv5TZro1k');
    for (const id of ['x'.repeat(65), 'a|b', '~a', 'é', '\n', 'a}b'])
      assert.match(encodeIdentifier(id), /^~[A-Za-z0-9_-]{27}$/, JSON.stringify(id));
  });

  it('refuses an empty or non-string identifier as a per-request argument error', () => {
    for (const id of ['', undefined, 42])
      assert.throws(
        () => encodeIdentifier(id as string),
        (error: unknown) => {
          assert.ok(error instanceof TollgateError);
          assert.equal(error.code, 'ERR_TOLLGATE_ARGUMENT');
          assert.equal(withoutPointer(error), 'the identifier must be a non-empty string');
          return true;
        },
      );
  });

  it('is what bucket keys carry', () => {
    const one = [fixedWindow({ limit: 1, windowMs: 1000 })];
    assert.deepEqual(bucketKeys('s', 'a b', one), ['s|~yGh6CKpdbtIEQyj6aml6uOltw0K']);
  });
});

describe('parseBucketKey', () => {
  it('reads back a single-policy key and a multi-policy key', () => {
    assert.deepEqual(parseBucketKey('api|user-1'), { scope: 'api', identifier: 'user-1' });
    assert.deepEqual(parseBucketKey('{api|user-1}:burst'), {
      scope: 'api',
      identifier: 'user-1',
      member: 'burst',
    });
    assert.deepEqual(parseBucketKey('api|a|b'), { scope: 'api', identifier: 'a|b' });
  });

  it('refuses a brace never closed, or one not followed by `:` and a member', () => {
    for (const key of ['{a|bc', '{a|b:c', '{api|user}x:m', '{api|user}', '{api|user}:', '{api|user}x'])
      assert.equal(parseBucketKey(key), undefined, key);
  });

  it('refuses a key without a scope or an identifier', () => {
    for (const key of ['', 'api', '|id', 'api|', '{|id}:m', '{api|}:m', '{api}:m'])
      assert.equal(parseBucketKey(key), undefined, key);
  });
});

describe('scopeNamed', () => {
  it('keeps a name that is a scope, and hashes one that is not, never two names to one scope', () => {
    assert.equal(scopeNamed('throttler:default', 'throttler.'), 'throttler:default');
    const route = scopeNamed('fastify-rate-limit-GET/users/:id', 'frl-');
    assert.match(route, /^frl-[A-Za-z0-9_-]{16}$/);
    assert.equal(validateScope(route), route);
    assert.notEqual(scopeNamed('GET/a', 'frl-'), scopeNamed('GET/b', 'frl-'));
    assert.equal(scopeNamed('GET/a', 'frl-'), scopeNamed('GET/a', 'frl-'));
    assert.match(scopeNamed('x'.repeat(65), 'frl-'), /^frl-/);
  });
});
