// grpc.health.v1's two messages on the wire: HealthCheckRequest (a service name) and HealthCheckResponse (a status).
import { tagOf, WireReader, WireType } from './wire-reader.js';
import { WireWriter } from './wire-writer.js';

/** `HealthCheckResponse.ServingStatus`. */
export const ServingStatus = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
export type ServingStatus = (typeof ServingStatus)[keyof typeof ServingStatus];

/**
 * A HealthCheckRequest: an object, never the bare name, since grpc-js takes a falsy decoded request ('') for a
 * missing one.
 */
export interface HealthCheckRequest {
  /** '' for the server as a whole. */
  readonly service: string;
}

/** Both messages hold their one field at number 1. */
const FIELD = 1;

/** Throws an ERR_TOLLGATE_ARGUMENT error on malformed bytes. */
export function decodeHealthCheckRequest(bytes: Uint8Array): HealthCheckRequest {
  const reader = new WireReader(bytes);
  let service = '';
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(FIELD, WireType.LEN)) service = reader.string();
    else reader.skip(tag);
  }
  return { service };
}

export function encodeHealthCheckRequest(request: HealthCheckRequest): Buffer {
  const writer = new WireWriter();
  writer.string(FIELD, request.service);
  return writer.finish();
}

/** The status a HealthCheckResponse holds. Throws on malformed bytes or an unknown status. */
export function decodeHealthCheckResponse(bytes: Uint8Array): ServingStatus {
  const reader = new WireReader(bytes);
  let status: ServingStatus = ServingStatus.UNKNOWN;
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(FIELD, WireType.VARINT))
      status = reader.enumValue(ServingStatus.SERVICE_UNKNOWN, 'a serving status') as ServingStatus;
    else reader.skip(tag);
  }
  return status;
}

export function encodeHealthCheckResponse(status: ServingStatus): Buffer {
  const writer = new WireWriter();
  writer.uint(FIELD, status);
  return writer.finish();
}
