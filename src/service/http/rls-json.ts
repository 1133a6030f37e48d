// The rate limit service's messages as JSON, as the reference service's /json endpoint reads and writes them
// (protobuf's JSON mapping): either spelling of a field name read, camelCase written, zero values left out.
import { argumentError } from '../../core/errors.js';
import {
  Code,
  type DescriptorStatus,
  type Entry,
  type HeaderValue,
  type LimitOverride,
  type RateLimitDescriptor,
  type RateLimitRequest,
  type RateLimitResponse,
  Unit,
} from '../protocol/messages.js';

const MAX_UINT32 = 2 ** 32 - 1;

/**
 * The request in `text`, read as protobuf's JSON parser reads it: field names in camelCase or as the .proto spells
 * them, `null` for an unset field, enums by name or number, integers as numbers or decimal strings, and an unknown
 * field refused. Throws an ERR_TOLLGATE_ARGUMENT error naming the field at fault.
 */
export function parseRateLimitRequest(text: string): RateLimitRequest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw argumentError(`the body is not JSON: ${(error as Error).message}`);
  }
  const fields = fieldsOf(json, 'the request', {
    domain: 'domain',
    descriptors: 'descriptors',
    hitsAddend: 'hitsAddend',
    hits_addend: 'hitsAddend',
  });
  const descriptors = fields.get('descriptors');
  return {
    domain: stringField(fields, 'domain', 'domain'),
    descriptors: arrayOf(descriptors, 'descriptors', parseDescriptor),
    hitsAddend: integerOf(fields.get('hitsAddend'), 'hitsAddend', MAX_UINT32) ?? 0,
  };
}

function parseDescriptor(json: unknown, where: string): RateLimitDescriptor {
  const fields = fieldsOf(json, where, {
    entries: 'entries',
    limit: 'limit',
    hitsAddend: 'hitsAddend',
    hits_addend: 'hitsAddend',
  });
  const entries = arrayOf(fields.get('entries'), `${where}.entries`, parseEntry);
  const limit = fields.get('limit');
  // A wrapped uint64: set (even to 0) or not at all.
  const hitsAddend = integerOf(fields.get('hitsAddend'), `${where}.hitsAddend`, Number.MAX_SAFE_INTEGER);
  return {
    entries,
    ...(limit === undefined ? {} : { limit: parseOverride(limit, `${where}.limit`) }),
    ...(hitsAddend === undefined ? {} : { hitsAddend }),
  };
}

function parseEntry(json: unknown, where: string): Entry {
  const fields = fieldsOf(json, where, { key: 'key', value: 'value' });
  return {
    key: stringField(fields, 'key', `${where}.key`),
    value: stringField(fields, 'value', `${where}.value`),
  };
}

function parseOverride(json: unknown, where: string): LimitOverride {
  const fields = fieldsOf(json, where, {
    requestsPerUnit: 'requestsPerUnit',
    requests_per_unit: 'requestsPerUnit',
    unit: 'unit',
  });
  return {
    requestsPerUnit: integerOf(fields.get('requestsPerUnit'), `${where}.requestsPerUnit`, MAX_UINT32) ?? 0,
    unit: unitOf(fields.get('unit'), `${where}.unit`),
  };
}

/**
 * An object's fields by their camelCase name, from either spelling (`spellings` maps each to it); a field given
 * twice, in both spellings, is refused as protobuf refuses it, and `null` is a field left unset.
 */
function fieldsOf(json: unknown, where: string, spellings: Record<string, string>): Map<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw argumentError(`${where} must be a JSON object`);
  const fields = new Map<string, unknown>();
  for (const [name, value] of Object.entries(json)) {
    const field = Object.hasOwn(spellings, name) ? spellings[name] : undefined;
    if (field === undefined) throw argumentError(`${where} has an unknown field "${name}"`);
    if (fields.has(field)) throw argumentError(`${where} gives the field "${field}" twice`);
    fields.set(field, value);
  }
  for (const [field, value] of fields) if (value === null) fields.delete(field);
  return fields;
}

function stringField(fields: Map<string, unknown>, field: string, where: string): string {
  const value = fields.get(field) ?? '';
  if (typeof value !== 'string') throw argumentError(`${where} must be a string`);
  return value;
}

function arrayOf<T>(json: unknown, where: string, parse: (item: unknown, where: string) => T): T[] {
  if (json === undefined) return [];
  if (!Array.isArray(json)) throw argumentError(`${where} must be an array`);
  return json.map((item, index) => parse(item, `${where}[${index}]`));
}

/** An unsigned integer up to `max`, as a JSON number or a decimal string; undefined when unset. */
function integerOf(json: unknown, where: string, max: number): number | undefined {
  if (json === undefined) return undefined;
  const value = typeof json === 'string' && /^\d+$/.test(json) ? Number(json) : json;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max)
    throw argumentError(`${where} must be an integer from 0 to ${max}`);
  return value;
}

function unitOf(json: unknown, where: string): Unit {
  if (json === undefined) return Unit.UNKNOWN;
  const units: Record<string, Unit> = Unit;
  if (typeof json === 'string' && Object.hasOwn(units, json)) return units[json] as Unit;
  const known: readonly number[] = Object.values(Unit);
  if (typeof json === 'number' && known.includes(json)) return json as Unit;
  throw argumentError(`${where} must be one of ${Object.keys(Unit).join(', ')} (or its number)`);
}

/**
 * `response` as protobuf's JSON mapping writes it: camelCase names, enums by name, a duration as seconds with
 * three decimals when it has milliseconds (`"1.500s"`, `"3s"`), bytes in base64, and every zero value left out.
 */
export function formatRateLimitResponse(response: RateLimitResponse): string {
  const { overallCode, statuses, responseHeadersToAdd, requestHeadersToAdd, rawBody } = response;
  return JSON.stringify({
    ...(overallCode === Code.UNKNOWN ? {} : { overallCode: nameOf(Code, overallCode) }),
    ...(statuses.length === 0 ? {} : { statuses: statuses.map(statusJson) }),
    ...(responseHeadersToAdd.length === 0
      ? {}
      : { responseHeadersToAdd: responseHeadersToAdd.map(headerJson) }),
    ...(requestHeadersToAdd.length === 0 ? {} : { requestHeadersToAdd: requestHeadersToAdd.map(headerJson) }),
    ...(rawBody === undefined || rawBody.length === 0
      ? {}
      : { rawBody: Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.length).toString('base64') }),
  });
}

function statusJson({ code, currentLimit, limitRemaining, durationUntilResetMs }: DescriptorStatus): object {
  return {
    ...(code === Code.UNKNOWN ? {} : { code: nameOf(Code, code) }),
    ...(currentLimit === undefined
      ? {}
      : {
          currentLimit: {
            ...(currentLimit.name === '' ? {} : { name: currentLimit.name }),
            ...(currentLimit.requestsPerUnit === 0 ? {} : { requestsPerUnit: currentLimit.requestsPerUnit }),
            ...(currentLimit.unit === Unit.UNKNOWN ? {} : { unit: nameOf(Unit, currentLimit.unit) }),
          },
        }),
    ...(limitRemaining === 0 ? {} : { limitRemaining }),
    ...(durationUntilResetMs === undefined ? {} : { durationUntilReset: durationJson(durationUntilResetMs) }),
  };
}

function headerJson({ key, value }: HeaderValue): object {
  return { ...(key === '' ? {} : { key }), ...(value === '' ? {} : { value }) };
}

/** `google.protobuf.Duration` in JSON: whole seconds, or seconds and three decimals for milliseconds. */
export function durationJson(ms: number): string {
  const millis = ms % 1000;
  return `${(ms - millis) / 1000}${millis === 0 ? '' : `.${String(millis).padStart(3, '0')}`}s`;
}

/** An enum value's name; a number the protocol does not name is written as the number, as protobuf writes it. */
function nameOf(names: Record<string, number>, number: number): string | number {
  return Object.keys(names).find((name) => names[name] === number) ?? number;
}
