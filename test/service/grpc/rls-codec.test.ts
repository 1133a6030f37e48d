// The hand-written RLS codec against protobufjs (loading the shipped proto files): both ways, every field, unknown
// fields of every wire type skipped, and malformed bytes refused with an argument error, never anything else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  decodeHealthCheckRequest,
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  encodeHealthCheckResponse,
  ServingStatus,
} from '../../../src/service/grpc/health-codec.js';
import { decodeRateLimitRequest, encodeRateLimitRequest } from '../../../src/service/grpc/rls-request.js';
import { decodeRateLimitResponse, encodeRateLimitResponse } from '../../../src/service/grpc/rls-response.js';
import type { RateLimitRequest, RateLimitResponse, Unit } from '../../../src/service/protocol/messages.js';
import {
  extended,
  protobufjsDecodeRequest,
  protobufjsDecodeResponse,
  protobufjsEncodeRequest,
} from './grpc-fixture.js';

const MAX_UINT32 = 2 ** 32 - 1;
const text = fc.string({ unit: 'binary', maxLength: 40 });
const unit = fc.integer({ min: 0, max: 7 }).map((u) => u as Unit);
const uint32 = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: MAX_UINT32 }), fc.constant(MAX_UINT32));

const requestArb: fc.Arbitrary<RateLimitRequest> = fc.record(
  {
    domain: text,
    hitsAddend: uint32,
    descriptors: fc.array(
      fc.record(
        {
          entries: fc.array(fc.record({ key: text, value: text }, { noNullPrototype: true }), {
            maxLength: 5,
          }),
          limit: fc.record({ requestsPerUnit: uint32, unit }, { noNullPrototype: true }),
          hitsAddend: fc.oneof(fc.constant(0), fc.constant(5), fc.maxSafeNat()),
        },
        { requiredKeys: ['entries'], noNullPrototype: true },
      ),
      { maxLength: 6 },
    ),
  },
  { noNullPrototype: true },
);

const code = fc.constantFrom(0, 1, 2) as fc.Arbitrary<0 | 1 | 2>;
const header = fc.record({ key: text, value: text }, { noNullPrototype: true });
const responseArb: fc.Arbitrary<RateLimitResponse> = fc.record(
  {
    overallCode: code,
    statuses: fc.array(
      fc.record(
        {
          code,
          limitRemaining: uint32,
          currentLimit: fc.record({ name: text, requestsPerUnit: uint32, unit }, { noNullPrototype: true }),
          durationUntilResetMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 ** 40 })),
        },
        { requiredKeys: ['code', 'limitRemaining'], noNullPrototype: true },
      ),
      { maxLength: 6 },
    ),
    responseHeadersToAdd: fc.array(header, { maxLength: 4 }),
    requestHeadersToAdd: fc.array(header, { maxLength: 4 }),
    rawBody: fc.uint8Array({ minLength: 1, maxLength: 64 }),
  },
  {
    requiredKeys: ['overallCode', 'statuses', 'responseHeadersToAdd', 'requestHeadersToAdd'],
    noNullPrototype: true,
  },
);

function refused(decode: () => unknown): void {
  assert.throws(decode, (error: Error & { code?: string }) => error.code === 'ERR_TOLLGATE_ARGUMENT');
}

describe('RateLimitRequest', () => {
  it('decodes what protobufjs encodes, encodes what protobufjs decodes, and round-trips itself', () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        assert.deepEqual(decodeRateLimitRequest(protobufjsEncodeRequest(request)), request);
        assert.deepEqual(protobufjsDecodeRequest(encodeRateLimitRequest(request)), request);
        assert.deepEqual(decodeRateLimitRequest(encodeRateLimitRequest(request)), request);
      }),
      { numRuns: 300 },
    );
  });

  it('tells a descriptor hits_addend unset from 0 from 5, and decodes an empty request', () => {
    const request: RateLimitRequest = {
      domain: 'envoy',
      hitsAddend: 0,
      descriptors: [
        { entries: [{ key: 'a', value: '1' }] },
        { entries: [{ key: 'a', value: '2' }], hitsAddend: 0 },
        { entries: [{ key: 'a', value: '3' }], hitsAddend: 5 },
      ],
    };
    assert.deepEqual(decodeRateLimitRequest(protobufjsEncodeRequest(request)), request);
    assert.deepEqual(decodeRateLimitRequest(new Uint8Array()), {
      domain: '',
      descriptors: [],
      hitsAddend: 0,
    });
  });

  it('skips unknown fields of every wire type, at every level', () => {
    const bytes = extended.requestSerialize({
      domain: 'd',
      hitsAddend: 3,
      extraInt64: -1,
      extraDouble: 1.5,
      extraFloat: 2.5,
      extraBytes: Buffer.from([1, 2, 3]),
      extraPacked: [1, 300, 70000],
      extraMessage: { note: 'n' },
      descriptors: [
        {
          entries: [{ key: 'k', value: 'v', extraFixed64: 2 ** 40 }],
          limit: { requestsPerUnit: 10, unit: 1, extraFixed32: 7 },
          hitsAddend: { value: 4, extra: 'x' },
          extraSint64: -5,
          extraMessage: { note: 'm' },
        },
      ],
    });
    assert.deepEqual(decodeRateLimitRequest(bytes), {
      domain: 'd',
      hitsAddend: 3,
      descriptors: [
        { entries: [{ key: 'k', value: 'v' }], limit: { requestsPerUnit: 10, unit: 1 }, hitsAddend: 4 },
      ],
    });
  });

  it('skips a group, and a known field number of another wire type', () => {
    // domain "d"; field 9 as a group holding a varint; domain (field 1) as a varint, not a string.
    const bytes = Uint8Array.from([0x0a, 0x01, 0x64, 0x4b, 0x08, 0x01, 0x4c, 0x08, 0x07]);
    assert.deepEqual(decodeRateLimitRequest(bytes), { domain: 'd', descriptors: [], hitsAddend: 0 });
  });

  it('keeps the last of a repeated singular field, merging an embedded message as protobuf does', () => {
    const limit = (fields: number[]) => [0x12, fields.length, ...fields];
    const entry = [0x0a, 0x03, 0x0a, 0x01, 0x6b];
    const descriptor = [...entry, ...limit([0x08, 0x0a, 0x10, 0x02]), ...limit([0x08, 0x14])];
    const bytes = Uint8Array.from([
      0x0a,
      0x01,
      0x61,
      0x0a,
      0x01,
      0x62,
      0x12,
      descriptor.length,
      ...descriptor,
    ]);
    assert.deepEqual(decodeRateLimitRequest(bytes), {
      domain: 'b',
      hitsAddend: 0,
      descriptors: [{ entries: [{ key: 'k', value: '' }], limit: { requestsPerUnit: 20, unit: 2 } }],
    });
  });

  it('refuses a unit it does not know and a hits_addend beyond the safe integers', () => {
    const unit9 = Uint8Array.from([0x12, 0x04, 0x12, 0x02, 0x10, 0x09]);
    refused(() => decodeRateLimitRequest(unit9));
    const hits = [0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10];
    const huge = Uint8Array.from([0x12, hits.length + 2, 0x1a, hits.length, ...hits]);
    refused(() => decodeRateLimitRequest(huge));
  });

  it('refuses every cut through a field, and answers every cut between fields', () => {
    const request: RateLimitRequest = {
      domain: 'envoy',
      hitsAddend: 2,
      descriptors: [{ entries: [{ key: 'remote_address', value: '10.0.0.1' }], hitsAddend: 300 }],
    };
    const bytes = encodeRateLimitRequest(request);
    const boundaries = new Set([0, 7, bytes.length - 2, bytes.length]);
    for (let length = 0; length <= bytes.length; length++) {
      const prefix = bytes.subarray(0, length);
      if (boundaries.has(length)) decodeRateLimitRequest(prefix);
      else refused(() => decodeRateLimitRequest(prefix));
    }
  });

  it('answers any bytes with a request or an argument error, never another failure', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        try {
          decodeRateLimitRequest(bytes);
        } catch (error) {
          assert.equal((error as { code?: string }).code, 'ERR_TOLLGATE_ARGUMENT');
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('RateLimitResponse', () => {
  it('encodes what protobufjs decodes, and round-trips itself', () => {
    fc.assert(
      fc.property(responseArb, (response) => {
        assert.deepEqual(protobufjsDecodeResponse(encodeRateLimitResponse(response)), response);
        assert.deepEqual(decodeRateLimitResponse(encodeRateLimitResponse(response)), response);
      }),
      { numRuns: 300 },
    );
  });

  it('sends a count beyond a uint32 as its largest, and a negative or non-finite one as 0', () => {
    const response: RateLimitResponse = {
      overallCode: 1,
      statuses: [
        {
          code: 1,
          limitRemaining: 2 ** 40,
          currentLimit: { name: '', requestsPerUnit: Number.POSITIVE_INFINITY, unit: 1 },
          durationUntilResetMs: -5,
        },
        { code: 1, limitRemaining: -1, durationUntilResetMs: 1500.7 },
        { code: 1, limitRemaining: Number.NaN, durationUntilResetMs: Number.POSITIVE_INFINITY },
      ],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
    };
    const decoded = protobufjsDecodeResponse(encodeRateLimitResponse(response));
    assert.deepEqual(
      decoded.statuses.map((s) => [
        s.limitRemaining,
        s.currentLimit?.requestsPerUnit,
        s.durationUntilResetMs,
      ]),
      [
        [MAX_UINT32, MAX_UINT32, 0],
        [0, undefined, 1500],
        [0, undefined, Math.floor(Number.MAX_SAFE_INTEGER / 1000) * 1000 + 991],
      ],
    );
  });

  it('writes an empty status and an empty raw body as protobuf does: the one present, the other absent', () => {
    const bytes = encodeRateLimitResponse({
      overallCode: 0,
      statuses: [{ code: 0, limitRemaining: 0 }],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
      rawBody: new Uint8Array(),
    });
    assert.deepEqual([...bytes], [0x12, 0x00]);
  });
});

describe('health messages', () => {
  it('round-trip, and refuse an unknown status', () => {
    for (const service of ['', 'envoy.service.ratelimit.v3.RateLimitService', 'é'])
      assert.deepEqual(decodeHealthCheckRequest(encodeHealthCheckRequest({ service })), { service });
    for (const status of Object.values(ServingStatus))
      assert.equal(decodeHealthCheckResponse(encodeHealthCheckResponse(status)), status);
    refused(() => decodeHealthCheckResponse(Uint8Array.from([0x08, 0x04])));
    refused(() => decodeHealthCheckRequest(Uint8Array.from([0x0a, 0x02, 0x61])));
  });
});
