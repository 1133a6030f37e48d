// Client identity: address grouping (IPv6 prefixes, IPv4-mapped), API keys with the IP fallback, keyed hashes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TollgateError } from '../../src/core/errors.js';
import { addressIdentity } from '../../src/identity/address-identity.js';
import { apiKeyId, apiKeyIdentity } from '../../src/identity/api-key-identity.js';
import { identifierHasher } from '../../src/identity/identifier-hash.js';
import { encodeIdentifier } from '../../src/stores/key.js';

describe('addressIdentity', () => {
  it('keeps IPv4, and reads IPv4-mapped IPv6 as the IPv4 address', () => {
    assert.equal(addressIdentity('1.2.3.4'), '1.2.3.4');
    assert.equal(addressIdentity('::ffff:1.2.3.4'), '1.2.3.4');
    assert.equal(addressIdentity('::FFFF:102:304'), '1.2.3.4');
  });

  it('groups IPv6 by /64 by default, whatever the spelling', () => {
    const group = '2001:db8:1:2::/64';
    for (const address of [
      '2001:db8:1:2::1',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:0DB8:0001:0002:0:0:0:9',
    ])
      assert.equal(addressIdentity(address), group);
    assert.notEqual(addressIdentity('2001:db8:1:3::1'), group);
    assert.equal(addressIdentity('fe80::1%eth0'), 'fe80::/64');
  });

  it('takes another prefix', () => {
    assert.equal(addressIdentity('2001:db8:1:2::1', { ipv6Prefix: 48 }), '2001:db8:1::/48');
    assert.equal(
      addressIdentity('2001:db8:1:2::1', { ipv6Prefix: 56 }),
      addressIdentity('2001:db8:1:ff::1', { ipv6Prefix: 56 }),
    );
    assert.equal(addressIdentity('2001:db8::1', { ipv6Prefix: 128 }), '2001:db8::1/128');
    for (const ipv6Prefix of [0, 129, 1.5])
      assert.throws(
        () => addressIdentity('::1', { ipv6Prefix }),
        (e) => e instanceof TollgateError && e.option === 'ipv6Prefix',
      );
  });

  it('leaves anything that is no address unchanged, and undefined undefined', () => {
    for (const value of ['alice', 'key:abc', '010.0.0.1', '']) assert.equal(addressIdentity(value), value);
    assert.equal(addressIdentity(undefined), undefined);
  });
});

describe('apiKeyIdentity', () => {
  const identify = apiKeyIdentity<{ headers: Record<string, string | string[]> }>({
    keys: new Set(['demo-key-1']),
    fallback: () => '9.9.9.9',
  });

  it('names a recognised key by its digest, never the key itself', () => {
    const identity = identify({ headers: { 'x-api-key': 'demo-key-1' } });
    assert.equal(identity, apiKeyId('demo-key-1'));
    assert.match(String(identity), /^key:[0-9a-f]{24}$/);
    // Plain for the key encoder, so readable in Redis without containing the key.
    assert.equal(encodeIdentifier(String(identity)), identity);
  });

  it('treats an unknown, empty or repeated key exactly like no key: the fallback', () => {
    for (const headers of [
      {},
      { 'x-api-key': 'rotated-1' },
      { 'x-api-key': '' },
      { 'x-api-key': ['demo-key-1', 'x'] },
    ])
      assert.equal(identify({ headers }), '9.9.9.9');
  });

  it('reads Fetch Headers, another header name, or a custom reader', () => {
    const fetchStyle = apiKeyIdentity<{ headers: Headers }>({
      keys: ['k1'],
      header: 'Authorization-Key',
      fallback: () => 'ip',
    });
    assert.equal(fetchStyle({ headers: new Headers({ 'authorization-key': 'k1' }) }), apiKeyId('k1'));
    const custom = apiKeyIdentity<string>({ keys: ['k1'], fallback: () => 'ip', read: (req) => req });
    assert.equal(custom('k1'), apiKeyId('k1'));
    assert.equal(custom('k2'), 'ip');
  });

  it('rejects bad options at wire-up', () => {
    assert.throws(() => apiKeyIdentity({ keys: [''], fallback: () => 'ip' }), /keys/);
    assert.throws(() => apiKeyIdentity({ keys: [], fallback: undefined as never }), /fallback/);
  });
});

describe('identifierHasher', () => {
  it('is keyed, stable per secret, and agrees between an identity and its stored form', () => {
    const a = identifierHasher('secret-a');
    assert.equal(a.hash('1.2.3.4'), identifierHasher('secret-a').hash('1.2.3.4'));
    assert.notEqual(a.hash('1.2.3.4'), identifierHasher('secret-b').hash('1.2.3.4'));
    const odd = 'bob {braces} key';
    assert.equal(a.hash(odd), a.hashStored(encodeIdentifier(odd)));
    assert.ok(!a.hash('1.2.3.4').includes('1.2.3.4'));
  });
});
