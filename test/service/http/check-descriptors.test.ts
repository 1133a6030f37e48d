// The HTTP check's rules: descriptors built from a request's headers and peer as Envoy's rate limit actions build them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HttpCheckRules, HttpDescriptorRule } from '../../../src/service/config/types.js';
import { checkDescriptors, clientAddress } from '../../../src/service/http/check-descriptors.js';

function rules(...descriptors: HttpDescriptorRule[]): HttpCheckRules {
  return { domain: 'edge', descriptors, denyStatus: 429, source: { file: 'test.yaml', line: 1 } };
}

describe('clientAddress', () => {
  it('takes the X-Forwarded-For entry past the trusted hops, counted from the right', () => {
    const headers = { 'x-forwarded-for': '203.0.113.9, 10.0.0.1 ,10.0.0.2' };
    assert.equal(clientAddress(headers, 0, '10.0.0.3'), '10.0.0.2');
    assert.equal(clientAddress(headers, 1, '10.0.0.3'), '10.0.0.1');
    assert.equal(clientAddress(headers, 2, '10.0.0.3'), '203.0.113.9');
  });

  it('reads X-Real-IP only without X-Forwarded-For, then the peer', () => {
    assert.equal(clientAddress({ 'x-real-ip': ' 198.51.100.7 ' }, 0, '10.0.0.3'), '198.51.100.7');
    assert.equal(clientAddress({}, 3, '::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(
      clientAddress({ 'x-forwarded-for': ' , ', 'x-real-ip': '198.51.100.7' }, 0, '2001:db8::1'),
      '2001:db8::1',
    );
    assert.equal(clientAddress({}, 0, undefined), undefined);
  });

  it('takes the leftmost entry, never X-Real-IP, when X-Forwarded-For is too short or its entry empty', () => {
    const realIp = { 'x-real-ip': '198.51.100.7' };
    assert.equal(
      clientAddress({ ...realIp, 'x-forwarded-for': '203.0.113.9' }, 1, '10.0.0.3'),
      '203.0.113.9',
    );
    assert.equal(
      clientAddress({ ...realIp, 'x-forwarded-for': ' , 203.0.113.9, 10.0.0.1' }, 5, '10.0.0.3'),
      '203.0.113.9',
    );
    assert.equal(
      clientAddress({ ...realIp, 'x-forwarded-for': '203.0.113.9, ' }, 0, '10.0.0.3'),
      '203.0.113.9',
    );
  });

  it('writes one address one way: no port, no brackets, IPv6 in its short lower-case form', () => {
    const address = (forwarded: string) => clientAddress({ 'x-forwarded-for': forwarded }, 0, undefined);
    assert.equal(address('203.0.113.9:5678'), '203.0.113.9');
    assert.equal(address('[2001:DB8::1]:443'), '2001:db8::1');
    assert.equal(address('[2001:db8:0:0::1]'), '2001:db8::1');
    assert.equal(address('2001:0DB8::0001'), '2001:db8::1');
    assert.equal(address('::ffff:203.0.113.9'), '203.0.113.9');
    assert.equal(address('unknown'), 'unknown', 'what is not an address stays as written');
    assert.equal(clientAddress({ 'x-real-ip': '203.0.113.9:80' }, 0, undefined), '203.0.113.9');
  });
});

describe('checkDescriptors', () => {
  const request = {
    headers: {
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-method': 'POST',
      'x-original-uri': '/api/orders?page=2',
    },
    peer: '10.0.0.3',
  };

  it('builds one descriptor per rule, entries in order', () => {
    const built = checkDescriptors(
      rules(
        { entries: [{ type: 'remote_address', key: 'remote_address', trustedHops: 0 }] },
        {
          entries: [
            { type: 'generic_key', key: 'generic_key', value: 'api' },
            { type: 'request_header', key: 'method', header: 'X-Forwarded-Method', skipIfAbsent: false },
            { type: 'request_header', key: 'path', header: 'X-Original-URI', skipIfAbsent: false },
          ],
        },
      ),
      request,
    );
    assert.deepEqual(built, [
      { entries: [{ key: 'remote_address', value: '203.0.113.9' }] },
      {
        entries: [
          { key: 'generic_key', value: 'api' },
          { key: 'method', value: 'POST' },
          { key: 'path', value: '/api/orders?page=2' },
        ],
      },
    ]);
  });

  it('drops a whole descriptor for an absent header, or only the entry with skipIfAbsent', () => {
    const absent = { type: 'request_header', key: 'api_key', header: 'X-Api-Key' } as const;
    const built = checkDescriptors(
      rules(
        {
          entries: [
            { type: 'generic_key', key: 'kept', value: 'no' },
            { ...absent, skipIfAbsent: false },
          ],
        },
        {
          entries: [
            { type: 'generic_key', key: 'kept', value: 'yes' },
            { ...absent, skipIfAbsent: true },
          ],
        },
        { entries: [{ ...absent, skipIfAbsent: true }] },
      ),
      request,
    );
    assert.deepEqual(built, [{ entries: [{ key: 'kept', value: 'yes' }] }]);
  });

  it('drops a remote_address descriptor when no address is known', () => {
    const built = checkDescriptors(
      rules({ entries: [{ type: 'remote_address', key: 'remote_address', trustedHops: 0 }] }),
      {
        headers: {},
        peer: undefined,
      },
    );
    assert.deepEqual(built, []);
  });
});
