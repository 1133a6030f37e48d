// envoy.service.ratelimit.v3.RateLimitRequest on the wire: decoded for the server, encoded for clients and tests.
import type {
  Entry,
  LimitOverride,
  RateLimitDescriptor,
  RateLimitRequest,
  Unit,
} from '../protocol/messages.js';
import { Unit as Units } from '../protocol/messages.js';
import { decodeKeyValue, type Mutable } from './wire-messages.js';
import { tagOf, WireReader, WireType } from './wire-reader.js';
import { WireWriter } from './wire-writer.js';

const { LEN, VARINT } = WireType;
// RateLimitRequest
const DOMAIN = 1;
const DESCRIPTORS = 2;
const HITS_ADDEND = 3;
// RateLimitDescriptor
const ENTRIES = 1;
const LIMIT = 2;
const DESCRIPTOR_HITS = 3;
// Entry, RateLimitOverride, google.protobuf.UInt64Value
const KEY = 1;
const VALUE = 2;
const REQUESTS_PER_UNIT = 1;
const UNIT = 2;
const WRAPPED = 1;

/**
 * The request in `bytes`. A field of a known number but another wire type is skipped as unknown, as protobuf's own
 * parsers do; a repeated singular field keeps its last value (an embedded message merges, as protobuf's do).
 * Throws an ERR_TOLLGATE_ARGUMENT error on truncated or malformed bytes.
 */
export function decodeRateLimitRequest(bytes: Uint8Array): RateLimitRequest {
  const reader = new WireReader(bytes);
  let domain = '';
  const descriptors: RateLimitDescriptor[] = [];
  let hitsAddend = 0;
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(DOMAIN, LEN)) domain = reader.string();
    else if (tag === tagOf(DESCRIPTORS, LEN)) descriptors.push(reader.message(decodeDescriptor));
    else if (tag === tagOf(HITS_ADDEND, VARINT)) hitsAddend = reader.uint32();
    else reader.skip(tag);
  }
  return { domain, descriptors, hitsAddend };
}

function decodeDescriptor(reader: WireReader): RateLimitDescriptor {
  const entries: Entry[] = [];
  const descriptor: Mutable<RateLimitDescriptor> = { entries };
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(ENTRIES, LEN)) entries.push(reader.message(decodeKeyValue));
    else if (tag === tagOf(LIMIT, LEN)) descriptor.limit = reader.message(decodeOverride, descriptor.limit);
    else if (tag === tagOf(DESCRIPTOR_HITS, LEN))
      descriptor.hitsAddend = reader.message(decodeUInt64Value, descriptor.hitsAddend);
    else reader.skip(tag);
  }
  return descriptor;
}

/** `merged`: what an earlier occurrence of the field set, which this one's fields replace one by one. */
function decodeOverride(reader: WireReader, merged: LimitOverride | undefined): LimitOverride {
  let requestsPerUnit = merged?.requestsPerUnit ?? 0;
  let unit = merged?.unit ?? Units.UNKNOWN;
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(REQUESTS_PER_UNIT, VARINT)) requestsPerUnit = reader.uint32();
    else if (tag === tagOf(UNIT, VARINT))
      unit = reader.enumValue(Units.WEEK, 'a limit override unit') as Unit;
    else reader.skip(tag);
  }
  return { requestsPerUnit, unit };
}

function decodeUInt64Value(reader: WireReader, merged: number | undefined): number {
  let value = merged ?? 0;
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(WRAPPED, VARINT)) value = reader.uint64();
    else reader.skip(tag);
  }
  return value;
}

/** `request` in the wire format, as Envoy sends it: the client side of the service definition (tests, load tools). */
export function encodeRateLimitRequest(request: RateLimitRequest): Buffer {
  const writer = new WireWriter();
  writer.string(DOMAIN, request.domain);
  for (const descriptor of request.descriptors) {
    const mark = writer.fork(DESCRIPTORS);
    for (const entry of descriptor.entries) {
      const entryMark = writer.fork(ENTRIES);
      writer.string(KEY, entry.key);
      writer.string(VALUE, entry.value);
      writer.join(entryMark);
    }
    if (descriptor.limit !== undefined) {
      const limitMark = writer.fork(LIMIT);
      writer.uint(REQUESTS_PER_UNIT, descriptor.limit.requestsPerUnit);
      writer.uint(UNIT, descriptor.limit.unit);
      writer.join(limitMark);
    }
    if (descriptor.hitsAddend !== undefined) {
      const hitsMark = writer.fork(DESCRIPTOR_HITS);
      writer.uint(WRAPPED, descriptor.hitsAddend);
      writer.join(hitsMark);
    }
    writer.join(mark);
  }
  writer.uint(HITS_ADDEND, request.hitsAddend);
  return writer.finish();
}
