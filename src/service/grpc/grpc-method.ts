// A grpc-js method over Tollgate's own codec, refusing undecodable requests as INVALID_ARGUMENT.
import type { ServerMethodDefinition } from '@grpc/grpc-js';
import { argumentError } from '../../core/errors.js';

/** The gRPC status codes the service answers with (the protocol's numbers, the same in every gRPC library). */
export const GrpcStatus = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  UNAVAILABLE: 14,
} as const;

/** One method's messages: the server's side (decode the request) and a client's (encode it, decode the answer). */
export interface MethodCodec<Request, Response> {
  decodeRequest(bytes: Uint8Array): Request;
  encodeRequest(request: Request): Buffer;
  decodeResponse(bytes: Uint8Array): Response;
}

/**
 * The server's handler is given the decoded request, or the Error its bytes were refused with: grpc-js answers a
 * throwing deserializer INTERNAL, while a malformed request is the caller's fault, which the handler answers
 * INVALID_ARGUMENT. The handler encodes its answer itself (the response serializer passes bytes through), so that
 * a failure to encode is its own to report too. A client built from the definition speaks the plain messages.
 */
export interface TollgateMethod<Request, Response> extends ServerMethodDefinition<Request | Error, Buffer> {
  requestSerialize(request: Request): Buffer;
  responseDeserialize(bytes: Buffer): Response;
}

/**
 * `maxBytes`: a larger request is refused here, as a malformed one is, rather than by grpc-js's receive limit, which
 * answers RESOURCE_EXHAUSTED before any handler runs, so that the call goes uncounted.
 */
export function methodDefinition<Request, Response>(
  path: string,
  codec: MethodCodec<Request, Response>,
  responseStream: boolean,
  maxBytes = Number.POSITIVE_INFINITY,
): TollgateMethod<Request, Response> {
  return {
    path,
    requestStream: false,
    responseStream,
    requestDeserialize: (bytes: Buffer) => {
      if (bytes.length > maxBytes)
        return argumentError(`the request is ${bytes.length} bytes, larger than ${maxBytes} bytes`);
      try {
        return codec.decodeRequest(bytes);
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error));
      }
    },
    responseSerialize: (bytes: Buffer) => bytes,
    requestSerialize: (request: Request) => codec.encodeRequest(request),
    responseDeserialize: (bytes: Buffer) => codec.decodeResponse(bytes),
  };
}
