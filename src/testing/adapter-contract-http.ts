// The app an adapter's binding builds for the contract, and the HTTP its tests speak to it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { it } from 'node:test';
import type { Decision } from '../decision/decision.js';
import type { RateLimitInfo } from '../decision/rate-limit-info.js';
import type { GateOptions } from '../gate/options.js';

export interface ContractApp {
  /** Base URL of an app that answers `GET /` with 200 JSON behind the limiter. */
  readonly url: string;
  close(): Promise<void>;
}

/** A framework-free rejection answer; each binding turns it into its framework's `handler`. */
export interface ContractAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** What the route behind the limiter does for one request; each binding acts it out its framework's way. */
export interface RoutePlan {
  /** The answer's status. Default 200. */
  readonly status?: number;
  /** Set as the response's `x-verdict` header, for `requestWasSuccessful` to read from the framework's response. */
  readonly verdict?: string;
  /** Awaited before answering (a slow handler); with `stream`, between the first chunk and the last. */
  readonly hold?: Promise<void>;
  /** Answer text/plain in two chunks, `STREAMED[0]` at once and `STREAMED[1]` after `hold`. */
  readonly stream?: boolean;
  /** Throw after `hold` instead of answering: the framework's error handling answers 500. */
  readonly throws?: boolean;
}

/** The chunks of a streamed answer. */
export const STREAMED = ['first\n', 'last\n'] as const;

/** A streamed answer's chunks, as a generator for frameworks that send a Readable. */
export async function* streamedChunks(plan: RoutePlan): AsyncGenerator<string> {
  yield STREAMED[0];
  await plan.hold;
  yield STREAMED[1];
}

/**
 * The request's rate-limit figures as the app reads them from the framework's own place: Express `req.rateLimit`,
 * Fastify `request.rateLimit`, Hono `c.get('rateLimit')`, Koa `ctx.state.rateLimit`, node:http `req.rateLimit`.
 */
export type Figures = RateLimitInfo | undefined;

export interface ContractOptions extends Omit<GateOptions<unknown>, 'requestWasSuccessful'> {
  /** Given the decision and the figures the binding read from its framework's place for the rejected request. */
  readonly handler?: (decision: Decision, figures: Figures) => ContractAnswer;
  /** Awaited by an async step of the app's own that runs before the limiter, given the node:http request. */
  readonly beforeLimit?: (req: IncomingMessage) => Promise<void>;
  /**
   * Called each time the route behind the limiter runs, with the figures it read from its framework's place: what
   * it does this time. Default: 200 JSON at once.
   */
  readonly route?: (figures: Figures) => RoutePlan;
  /** The adapter's `requestWasSuccessful`, given the `x-verdict` header the binding reads from its response. */
  readonly requestWasSuccessful?: (verdict: string | undefined) => boolean | Promise<boolean>;
  /**
   * Only for an adapter with the `thrown` capability: the adapter throws its rejections, and the app's own error
   * handler answers an error that carries an HTTP status with `shapedByApp(status)` (any other error: 500).
   */
  readonly thrown?: boolean;
}

/** What an adapter offers beyond the common ground; each binding declares every capability, true or false. */
export interface AdapterCapabilities {
  /**
   * A throw mode: a rejection reaches the framework's error handling as an error with its status and the
   * rate-limit headers, so the app's own error handler shapes the answer. The binding wires `thrown`.
   */
  readonly thrown: boolean;
}

/** The answer the app's own error handler gives, in `thrown` mode, to an error carrying an HTTP status. */
export function shapedByApp(status: number): ContractAnswer {
  return { status, body: { shapedBy: 'the app', status } };
}

export type MakeApp = (options: ContractOptions) => Promise<ContractApp>;

/** Runs `run` against an app built with `options`, closing the app however `run` ends. */
export type WithApp = (options: ContractOptions, run: (app: ContractApp) => Promise<void>) => Promise<void>;

/** One test of the contract, on apps the binding builds. */
export type AdapterCase = (withApp: WithApp) => Promise<void>;

/** Registers each case as a test of its title. */
export function registerCases(cases: Readonly<Record<string, AdapterCase>>, withApp: WithApp): void {
  for (const [title, run] of Object.entries(cases)) it(title, () => run(withApp));
}

/** Every request comes from here, so this is what each adapter's default identifier must resolve. */
export const CLIENT = '127.0.0.1';

/** Listens on an ephemeral loopback port; `close` also drops fetch's keep-alive sockets so the process exits. */
export async function listen(server: Server): Promise<ContractApp> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

/** One bounded request: a hung adapter fails its test instead of stalling the run. */
export async function request(app: ContractApp, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${app.url}/`, { headers, signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json');
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text };
}

/** Rejects with `what` if `promise` has not settled within `ms`, so a wait that never ends fails its test. */
export async function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what()}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A client that sends a whole request, waits until the app holds it (`held`), and with `seen` until that much of
 * the response arrived, then resets the connection (RST). Held before the limiter, the server's socket is
 * destroyed by the time the limiter runs, and has no address; held in the route, the client left mid-response.
 */
export async function resetWhileHeld(app: ContractApp, held: Promise<void>, seen?: string): Promise<void> {
  const { hostname, port } = new URL(app.url);
  const socket: Socket = connect(Number(port), hostname);
  let received = '';
  const arrived = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      if (seen !== undefined && received.includes(seen)) resolve();
    });
  });
  try {
    await within(once(socket, 'connect'), 5000, () => 'connecting');
    socket.write(`GET / HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
    await within(held, 5000, () => 'the app never held the request');
    if (seen !== undefined) await within(arrived, 5000, () => `${JSON.stringify(seen)} never arrived`);
  } finally {
    socket.resetAndDestroy();
  }
}

/** Resolves once the request's connection is gone (the server saw the reset; its ECONNRESET is the server's). */
export function connectionClosed(req: IncomingMessage): Promise<void> {
  if (req.socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => req.socket.once('close', () => resolve()));
}

/** Reads a streamed answer's first chunk, leaving the rest to `rest`. */
export async function streaming(app: ContractApp): Promise<{ status: number; rest: () => Promise<string> }> {
  const response = await fetch(`${app.url}/`, { signal: AbortSignal.timeout(5000) });
  const reader = response.body?.getReader();
  assert.ok(reader, 'a streamed answer has a body');
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(STREAMED[0])) {
    const { done, value } = await reader.read();
    assert.ok(!done, `the stream ended before its first chunk: ${JSON.stringify(text)}`);
    text += decoder.decode(value, { stream: true });
  }
  const rest = async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      text += decoder.decode(chunk.value, { stream: true });
    return text;
  };
  return { status: response.status, rest };
}
