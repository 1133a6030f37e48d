// protobufjs's view of the service (through @grpc/proto-loader, from the shipped proto files), to check the
// hand-written codec against an independent implementation, and gRPC clients of a started server.
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type {
  DescriptorStatus,
  RateLimitRequest,
  RateLimitResponse,
} from '../../../src/service/protocol/messages.js';

const PROTO_ROOT = fileURLToPath(new URL('../../../proto', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));
const LOAD_OPTIONS = { includeDirs: [PROTO_ROOT, FIXTURES], longs: Number, defaults: false, arrays: true };

export const RLS_PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

const definitions = protoLoader.loadSync(
  ['envoy/service/ratelimit/v3/rls.proto', 'grpc/health/v1/health.proto', 'extended.proto'],
  LOAD_OPTIONS,
);

function service(name: string): grpc.ServiceDefinition {
  return definitions[name] as grpc.ServiceDefinition;
}

/** protobufjs's serializers of the real messages, from the proto files the package ships. */
const rls = service('envoy.service.ratelimit.v3.RateLimitService').ShouldRateLimit as grpc.MethodDefinition<
  object,
  object
>;
/** The request with extra fields of every wire type. */
export const extended = service('tollgate.test.Extended').ShouldRateLimit as grpc.MethodDefinition<
  object,
  object
>;

/** Request plain object -> protobufjs's object shape. */
export function protoRequest(request: RateLimitRequest): object {
  return {
    domain: request.domain,
    hitsAddend: request.hitsAddend,
    descriptors: request.descriptors.map((d) => ({
      entries: d.entries.map((e) => ({ key: e.key, value: e.value })),
      ...(d.limit === undefined ? {} : { limit: d.limit }),
      ...(d.hitsAddend === undefined ? {} : { hitsAddend: { value: d.hitsAddend } }),
    })),
  };
}

interface ProtoStatus {
  code?: number;
  currentLimit?: { name?: string; requestsPerUnit?: number; unit?: number };
  limitRemaining?: number;
  durationUntilReset?: { seconds?: number; nanos?: number };
}

interface ProtoResponse {
  overallCode?: number;
  statuses: ProtoStatus[];
  responseHeadersToAdd: { key?: string; value?: string }[];
  requestHeadersToAdd: { key?: string; value?: string }[];
  rawBody?: Buffer;
}

/** protobufjs's decoded response -> the plain object (durations to the ms, absent fields at their defaults). */
export function fromProtoResponse(raw: object): RateLimitResponse {
  const response = raw as ProtoResponse;
  const headers = (list: ProtoResponse['responseHeadersToAdd']) =>
    list.map((h) => ({ key: h.key ?? '', value: h.value ?? '' }));
  return {
    overallCode: (response.overallCode ?? 0) as RateLimitResponse['overallCode'],
    statuses: response.statuses.map(fromProtoStatus),
    responseHeadersToAdd: headers(response.responseHeadersToAdd),
    requestHeadersToAdd: headers(response.requestHeadersToAdd),
    ...(response.rawBody === undefined ? {} : { rawBody: new Uint8Array(response.rawBody) }),
  };
}

function fromProtoStatus(status: ProtoStatus): DescriptorStatus {
  const limit = status.currentLimit;
  const duration = status.durationUntilReset;
  return {
    code: (status.code ?? 0) as DescriptorStatus['code'],
    limitRemaining: status.limitRemaining ?? 0,
    ...(limit === undefined
      ? {}
      : {
          currentLimit: {
            name: limit.name ?? '',
            requestsPerUnit: limit.requestsPerUnit ?? 0,
            unit: (limit.unit ?? 0) as 0,
          },
        }),
    ...(duration === undefined
      ? {}
      : { durationUntilResetMs: (duration.seconds ?? 0) * 1000 + Math.floor((duration.nanos ?? 0) / 1e6) }),
  };
}

/** protobufjs's encoding of `request`. */
export function protobufjsEncodeRequest(request: RateLimitRequest): Buffer {
  return rls.requestSerialize(protoRequest(request));
}

/** protobufjs's decoding of a response. */
export function protobufjsDecodeResponse(bytes: Buffer): RateLimitResponse {
  return fromProtoResponse(rls.responseDeserialize(bytes));
}

/** protobufjs's decoding of a request, in the plain shape. */
export function protobufjsDecodeRequest(bytes: Buffer): RateLimitRequest {
  type Raw = {
    domain?: string;
    hitsAddend?: number;
    descriptors: {
      entries: { key?: string; value?: string }[];
      limit?: { requestsPerUnit?: number; unit?: number };
      hitsAddend?: { value?: number };
    }[];
  };
  const raw = rls.requestDeserialize(bytes) as Raw;
  return {
    domain: raw.domain ?? '',
    hitsAddend: raw.hitsAddend ?? 0,
    descriptors: raw.descriptors.map((d) => ({
      entries: d.entries.map((e) => ({ key: e.key ?? '', value: e.value ?? '' })),
      ...(d.limit === undefined
        ? {}
        : { limit: { requestsPerUnit: d.limit.requestsPerUnit ?? 0, unit: (d.limit.unit ?? 0) as 0 } }),
      ...(d.hitsAddend === undefined ? {} : { hitsAddend: d.hitsAddend.value ?? 0 }),
    })),
  };
}

type Callback = (error: grpc.ServiceError | null, value?: unknown) => void;
type UnaryClient = grpc.Client & Record<string, (request: unknown, callback: Callback) => void>;

/** A client of `definition` at `port`, closed by the caller. */
function client(definition: grpc.ServiceDefinition, port: number): UnaryClient {
  const Client = grpc.makeGenericClientConstructor(definition, 'client');
  return new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as UnaryClient;
}

/** Calls `method` once; resolves with the answer or the gRPC error. */
export function call(c: UnaryClient, method: string, request: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const fn = c[method];
    if (fn === undefined) throw new Error(`no method ${method}`);
    fn.call(c, request, (error, value) => (error === null ? resolve(value) : reject(error)));
  });
}

/** The rate limit service as protobufjs speaks it. */
export function rlsClient(port: number): UnaryClient {
  return client(service('envoy.service.ratelimit.v3.RateLimitService'), port);
}

/** The health service as protobufjs speaks it. */
export function healthClient(
  port: number,
): UnaryClient & { Watch(request: object): grpc.ClientReadableStream<{ status: number }> } {
  return client(service('grpc.health.v1.Health'), port) as UnaryClient & {
    Watch(request: object): grpc.ClientReadableStream<{ status: number }>;
  };
}

/** ShouldRateLimit sending the extended request, whose extra fields the server must skip. */
export function extendedClient(port: number): UnaryClient {
  return client({ ShouldRateLimit: { ...extended, path: RLS_PATH } }, port);
}

/** ShouldRateLimit sending raw bytes and answering raw bytes. */
export function rawClient(port: number): UnaryClient {
  const identity = (bytes: Buffer) => bytes;
  return client(
    {
      ShouldRateLimit: {
        path: RLS_PATH,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    port,
  );
}
