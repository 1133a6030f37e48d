// Where a guard finds a request's parts in each of Nest's contexts: HTTP, GraphQL and WebSocket.
import type { IncomingHttpHeaders } from 'node:http';
import type { ExecutionContext } from '@nestjs/common';
import { optionalPeer } from '../../core/optional-peer.js';

/** A request and the response its headers go on (absent when the context has none). */
export interface RequestParts {
  readonly request: unknown;
  readonly response: unknown;
}

/** A WebSocket message's client as a request: its address and handshake headers, and the client itself. */
export interface WsRequest {
  readonly ip: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly client: unknown;
}

/**
 * HTTP: the platform's request and response. GraphQL: those of its context (the third argument, as
 * `GqlExecutionContext.getContext()` gives it): `req` and `res` on Express, `req` (or `request`) and `reply` on
 * Fastify, and Mercurius's `reply` with its `request`. Undefined for other contexts.
 */
export function httpParts(context: ExecutionContext): RequestParts | undefined {
  const type = context.getType<string>();
  if (type === 'http') {
    const http = context.switchToHttp();
    return { request: http.getRequest(), response: http.getResponse() };
  }
  if (type !== 'graphql') return undefined;
  const gql = context.getArgByIndex<Record<string, unknown> | undefined>(2) ?? {};
  const reply = gql.reply as { request?: unknown } | undefined;
  return { request: gql.req ?? gql.request ?? reply?.request, response: gql.res ?? reply };
}

interface WsClient {
  readonly _socket?: { readonly remoteAddress?: string };
  readonly handshake?: { readonly address?: string; readonly headers?: IncomingHttpHeaders };
  readonly conn?: { readonly remoteAddress?: string };
}

/** The client of a WebSocket message as a request: `ws`'s socket address, or Socket.IO's handshake. */
export function wsRequest(context: ExecutionContext): WsRequest {
  const client = context.switchToWs().getClient<WsClient | undefined>();
  const ip = client?.handshake?.address ?? client?._socket?.remoteAddress ?? client?.conn?.remoteAddress;
  return { ip, headers: client?.handshake?.headers ?? {}, client };
}

/**
 * The client socket itself, read through a view that adds `wsRequest`'s `ip` and `headers` where the socket has
 * none of its own: code written for the socket (`req.handshake.address`, `req._socket.remoteAddress`, its methods,
 * its writes) sees the socket, and code written for a request sees an address and headers.
 */
export function wsClientView(context: ExecutionContext): Record<string, unknown> {
  const client = context.switchToWs().getClient<unknown>();
  const { ip, headers } = wsRequest(context);
  if (typeof client !== 'object' || client === null) return { ip, headers };
  const added: Record<string, unknown> = { ip, headers };
  return new Proxy(client as Record<string, unknown>, {
    get: (socket, name) =>
      (name === 'ip' || name === 'headers') && !(name in socket) ? added[name] : Reflect.get(socket, name),
    has: (socket, name) => name === 'ip' || name === 'headers' || name in socket,
  });
}

type WsExceptionClass = new (error: string | object) => Error;
let wsExceptionClass: WsExceptionClass | undefined;

/**
 * An error a gateway sends its client as `{ event: 'exception', data: { status: 'error', message } }`: Nest's own
 * WsException, from the app's @nestjs/websockets (a gateway means it is installed), so Nest's filters know it.
 */
export function wsException(error: string | object): Error {
  wsExceptionClass ??= loadWsException();
  return new wsExceptionClass(error);
}

function loadWsException(): WsExceptionClass {
  try {
    return optionalPeer<{ WsException: WsExceptionClass }>('@nestjs/websockets', 'a WebSocket guard')
      .WsException;
  } catch {
    // No gateway package to take the class from: an error shaped the same, for a filter of the app's own.
    return class WsException extends Error {
      readonly #error: string | object;
      constructor(error: string | object) {
        super(typeof error === 'string' ? error : String((error as { message?: unknown }).message));
        this.#error = error;
      }
      getError(): string | object {
        return this.#error;
      }
    };
  }
}
