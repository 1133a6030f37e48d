// envoy.service.ratelimit.v3.RateLimitResponse on the wire: encoded for the server, decoded for clients and tests.
import type {
  Code,
  CurrentLimit,
  DescriptorStatus,
  HeaderValue,
  RateLimitResponse,
  Unit,
} from '../protocol/messages.js';
import { Code as Codes, Unit as Units } from '../protocol/messages.js';
import { decodeKeyValue, type Mutable } from './wire-messages.js';
import { tagOf, WireReader, WireType } from './wire-reader.js';
import { WireWriter } from './wire-writer.js';

const { LEN, VARINT } = WireType;
// RateLimitResponse
const OVERALL_CODE = 1;
const STATUSES = 2;
const RESPONSE_HEADERS = 3;
const REQUEST_HEADERS = 4;
const RAW_BODY = 5;
// DescriptorStatus
const CODE = 1;
const CURRENT_LIMIT = 2;
const LIMIT_REMAINING = 3;
const DURATION_UNTIL_RESET = 4;
// RateLimit
const NAME = 3;
const REQUESTS_PER_UNIT = 1;
const UNIT = 2;
// google.protobuf.Duration
const SECONDS = 1;
const NANOS = 2;
// envoy.config.core.v3.HeaderValue (the shape of a descriptor's Entry)
const KEY = 1;
const VALUE = 2;

const MAX_UINT32 = 0xffffffff;

/**
 * `response` in the wire format. Counts beyond a uint32 (limit_remaining, requests_per_unit) are sent as its
 * largest value, as Envoy's own service reports an unlimited remainder, rather than wrapping round to a small one;
 * a negative or non-finite count or duration is sent as 0.
 */
export function encodeRateLimitResponse(response: RateLimitResponse): Buffer {
  const writer = new WireWriter();
  writer.uint(OVERALL_CODE, response.overallCode);
  for (const status of response.statuses) {
    const mark = writer.fork(STATUSES);
    writer.uint(CODE, status.code);
    if (status.currentLimit !== undefined) encodeLimit(writer, status.currentLimit);
    writer.uint(LIMIT_REMAINING, whole(status.limitRemaining, MAX_UINT32));
    if (status.durationUntilResetMs !== undefined) encodeDuration(writer, status.durationUntilResetMs);
    writer.join(mark);
  }
  encodeHeaders(writer, RESPONSE_HEADERS, response.responseHeadersToAdd);
  encodeHeaders(writer, REQUEST_HEADERS, response.requestHeadersToAdd);
  if (response.rawBody !== undefined) writer.bytes(RAW_BODY, response.rawBody);
  return writer.finish();
}

function encodeLimit(writer: WireWriter, limit: CurrentLimit): void {
  const mark = writer.fork(CURRENT_LIMIT);
  writer.uint(REQUESTS_PER_UNIT, whole(limit.requestsPerUnit, MAX_UINT32));
  writer.uint(UNIT, limit.unit);
  writer.string(NAME, limit.name);
  writer.join(mark);
}

function encodeDuration(writer: WireWriter, durationMs: number): void {
  const ms = whole(durationMs, Number.MAX_SAFE_INTEGER);
  const mark = writer.fork(DURATION_UNTIL_RESET);
  writer.uint(SECONDS, Math.floor(ms / 1000));
  writer.uint(NANOS, (ms % 1000) * 1_000_000);
  writer.join(mark);
}

function encodeHeaders(writer: WireWriter, field: number, headers: readonly HeaderValue[]): void {
  for (const header of headers) {
    const mark = writer.fork(field);
    writer.string(KEY, header.key);
    writer.string(VALUE, header.value);
    writer.join(mark);
  }
}

/** `value` as a whole number in 0..max: NaN and negatives 0, beyond max (Infinity included) max. */
function whole(value: number, max: number): number {
  if (!(value > 0)) return 0;
  return value < max ? Math.floor(value) : max;
}

/**
 * The response in `bytes`, as Envoy reads it: the client side of the service definition (tests, load tools).
 * A duration is read to the whole millisecond. Throws an ERR_TOLLGATE_ARGUMENT error on truncated or malformed bytes.
 */
export function decodeRateLimitResponse(bytes: Uint8Array): RateLimitResponse {
  const reader = new WireReader(bytes);
  const response: Mutable<RateLimitResponse> = {
    overallCode: Codes.UNKNOWN,
    statuses: [],
    responseHeadersToAdd: [],
    requestHeadersToAdd: [],
  };
  const statuses: DescriptorStatus[] = [];
  const responseHeaders: HeaderValue[] = [];
  const requestHeaders: HeaderValue[] = [];
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(OVERALL_CODE, VARINT)) response.overallCode = decodeCode(reader);
    else if (tag === tagOf(STATUSES, LEN)) statuses.push(reader.message(decodeStatus));
    else if (tag === tagOf(RESPONSE_HEADERS, LEN)) responseHeaders.push(reader.message(decodeKeyValue));
    else if (tag === tagOf(REQUEST_HEADERS, LEN)) requestHeaders.push(reader.message(decodeKeyValue));
    else if (tag === tagOf(RAW_BODY, LEN)) response.rawBody = reader.bytes();
    else reader.skip(tag);
  }
  response.statuses = statuses;
  response.responseHeadersToAdd = responseHeaders;
  response.requestHeadersToAdd = requestHeaders;
  return response;
}

function decodeCode(reader: WireReader): Code {
  return reader.enumValue(Codes.OVER_LIMIT, 'a response code') as Code;
}

function decodeStatus(reader: WireReader): DescriptorStatus {
  const status: Mutable<DescriptorStatus> = { code: Codes.UNKNOWN, limitRemaining: 0 };
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(CODE, VARINT)) status.code = decodeCode(reader);
    else if (tag === tagOf(CURRENT_LIMIT, LEN)) status.currentLimit = reader.message(decodeLimit);
    else if (tag === tagOf(LIMIT_REMAINING, VARINT)) status.limitRemaining = reader.uint32();
    else if (tag === tagOf(DURATION_UNTIL_RESET, LEN))
      status.durationUntilResetMs = reader.message(decodeDurationMs);
    else reader.skip(tag);
  }
  return status;
}

function decodeLimit(reader: WireReader): CurrentLimit {
  let name = '';
  let requestsPerUnit = 0;
  let unit: Unit = Units.UNKNOWN;
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(NAME, LEN)) name = reader.string();
    else if (tag === tagOf(REQUESTS_PER_UNIT, VARINT)) requestsPerUnit = reader.uint32();
    else if (tag === tagOf(UNIT, VARINT)) unit = reader.enumValue(Units.WEEK, 'a limit unit') as Unit;
    else reader.skip(tag);
  }
  return { name, requestsPerUnit, unit };
}

function decodeDurationMs(reader: WireReader): number {
  let seconds = 0;
  let nanos = 0;
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(SECONDS, VARINT)) seconds = reader.uint64();
    else if (tag === tagOf(NANOS, VARINT)) nanos = reader.uint32();
    else reader.skip(tag);
  }
  return seconds * 1000 + Math.floor(nanos / 1_000_000);
}
