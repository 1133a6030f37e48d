// Express apps behind a rate limiter over loopback HTTP: one request sequence on a mocked clock, recording what a
// client and the route saw (status, rate-limit headers, body, the request's figures), and a plain app to ask.
import { once } from 'node:events';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { mock } from 'node:test';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { degradedResponse, type Store, type StoreRequest } from '../../../src/stores/store.js';

/** 2026-01-01T12:00:00.250Z: a quarter second past the second, so every rounding to seconds shows. */
export const T0 = Date.UTC(2026, 0, 1, 12, 0, 0, 250);

export interface Step {
  /** Milliseconds the shared clock moves on before this request. */
  readonly advance?: number;
  /** '/' answers 200, '/fail' 500, '/missing' 404; '/held/<id>' waits for `release: '<id>'`, then answers 500. */
  readonly path?: string;
  /**
   * Sent with the request: `x-forwarded-for` picks the client (the app trusts one proxy). Without it, a request to an
   * app trusting proxies carries the entry its proxy would add, the socket's address.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** Answers the held request of that id (with 500) and records its answer at this point of the sequence. */
  readonly release?: string;
  /**
   * GET /abandoned, whose client resets the connection once the route has it; the route answers 200 a turn after
   * the server saw the close, as a handler still running would. Recorded without a status, or with the limiter's
   * if it answered (the client resets then too).
   */
  readonly abandon?: boolean;
}

export interface Answer {
  readonly status: number | undefined;
  /** The rate-limit fields, Retry-After and Content-Type (Date is left out: Node writes it from the real clock). */
  readonly headers: Record<string, string>;
  readonly body: string;
  /** The figures on the request under the limiter's property name, as the app saw them once it answered. */
  readonly figures: unknown;
}

const COMPARED = /^(x-)?ratelimit|^retry-after$|^content-type$/;

/** The request's figures as JSON sees them, plus which keys are enumerable and the non-enumerated `current`. */
function snapshot(figures: unknown): unknown {
  if (typeof figures !== 'object' || figures === null) return figures;
  const { current } = figures as { current?: unknown };
  return { ...JSON.parse(JSON.stringify(figures)), keys: Object.keys(figures), current };
}

/**
 * Builds an app (trusting one proxy unless told, so `x-forwarded-for` names the client) with the limiters in front of
 * the routes,
 * and runs `steps` on a clock mocked to start at T0. Each request goes out on its own connection after the
 * previous answer, and its record waits for the server to have finished the response.
 */
export async function runSequence(
  makeLimiter: () => RequestHandler | RequestHandler[],
  steps: readonly Step[],
  property = 'rateLimit',
  trustProxy: unknown = 1,
): Promise<Answer[]> {
  mock.timers.enable({ apis: ['Date'], now: T0 });
  const finished = new Map<string, Promise<unknown>>();
  /** Each request's figures as they are now: a response never sent has no 'finish' to read them at. */
  const readers = new Map<string, () => unknown>();
  const holds = new Map<string, Hold>();
  const hold = (id: string) => {
    let entry = holds.get(id);
    if (entry === undefined) {
      entry = { arrived: deferred(), go: deferred(), answer: undefined };
      holds.set(id, entry);
    }
    return entry;
  };
  const app = express();
  app.set('trust proxy', trustProxy);
  app.use((req, res, next) => {
    const figures = () => snapshot((req as unknown as Record<string, unknown>)[property]);
    readers.set(req.get('x-step') ?? '', figures);
    finished.set(req.get('x-step') ?? '', once(res, 'finish').then(figures));
    next();
  });
  app.use(makeLimiter());
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  app.get('/fail', (_req, res) => {
    res.status(500).send('failed');
  });
  let abandoned = abandonment();
  app.get('/abandoned', (req, res) => {
    const { arrived, answered } = abandoned;
    arrived.resolve();
    req.socket.once('close', () =>
      setImmediate(() => {
        res.send('late');
        answered.resolve();
      }),
    );
  });
  app.get('/held/:id', (req, res) => {
    const { arrived, go } = hold(req.params.id as string);
    arrived.resolve();
    go.promise.then(() => res.status(500).send('failed'));
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const answers: Answer[] = [];
  const proxied = typeof trustProxy === 'number' && trustProxy > 0;
  const headersOf = (step: Step, id: string) => ({
    ...(proxied ? { 'x-forwarded-for': '127.0.0.1' } : {}),
    ...step.headers,
    'x-step': id,
  });
  try {
    for (const [index, step] of steps.entries()) {
      if (step.advance !== undefined) mock.timers.tick(step.advance);
      if (step.abandon) {
        abandoned = abandonment();
        const id = String(index);
        const status = await abandon(port, headersOf(step, id), abandoned.arrived.promise);
        if (status === undefined) await abandoned.answered.promise;
        answers.push({ status, headers: {}, body: '', figures: readers.get(id)?.() });
      } else if (step.release !== undefined) {
        const { go, answer } = hold(step.release);
        go.resolve();
        answers.push(await (answer as Promise<Answer>));
      } else {
        const id = String(index);
        const path = step.path ?? '/';
        const answer = send(port, path, headersOf(step, id)).then(async (reply) => ({
          ...reply,
          figures: await finished.get(id),
        }));
        if (path.startsWith('/held/')) {
          const entry = hold(path.slice('/held/'.length));
          entry.answer = answer;
          // In the route before the clock moves on: the request has been counted.
          await entry.arrived.promise;
          continue;
        }
        answers.push(await answer);
      }
      // Refunds run on the response's 'finish': let them land before the next request.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    server.close();
    mock.timers.reset();
  }
  return answers;
}

interface Deferred {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
}

interface Hold {
  readonly arrived: Deferred;
  readonly go: Deferred;
  answer: Promise<Answer> | undefined;
}

/** What the route and the sequence tell each other of the abandoned request in flight. */
function abandonment() {
  return { arrived: deferred(), answered: deferred() };
}

/**
 * Sends GET /abandoned with `headers` on a connection of its own, and resets it once the route has the request,
 * or once an answer came (the limiter's): resolves with that answer's status, undefined when the route had it.
 */
async function abandon(
  port: number,
  headers: Record<string, string>,
  arrived: Promise<void>,
): Promise<number | undefined> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  const fields = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`GET /abandoned HTTP/1.1\r\nHost: 127.0.0.1\r\n${fields.join('')}\r\n`);
  const answered = once(socket, 'data').then(([chunk]) => Number(String(chunk).split(' ')[1]));
  const status = await Promise.race([arrived.then(() => undefined), answered]);
  socket.resetAndDestroy();
  return status;
}

function deferred(): Deferred {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

function send(port: number, path: string, headers: Record<string, string>): Promise<Omit<Answer, 'figures'>> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode, headers: compared(res.headers), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function compared(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (COMPARED.test(name) && value !== undefined) kept[name] = String(value);
  return kept;
}

export const quiet = () => ({ warn: mock.fn(), error: mock.fn() });

/** An app with `limiter` (or several) before GET /, whose error handler answers `{ error: code }` with 500. */
export async function serve(limiter: RequestHandler | RequestHandler[]) {
  const errors: unknown[] = [];
  const app = express();
  app.use(limiter);
  app.get('/', (req, res) => {
    res.json({ figures: req.rateLimit ?? null });
  });
  app.use((error: { code?: string }, _req: Request, res: Response, _next: NextFunction) => {
    errors.push(error);
    res.status(500).json({ error: error.code });
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const get = async (headers: Record<string, string> = {}) => {
    const response = await fetch(url, { headers });
    const text = await response.text();
    const body: unknown = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
    return { status: response.status, headers: response.headers, body };
  };
  return { get, errors, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A Tollgate store that cannot reach its data: it answers as its fail mode says. */
export function unreachable(): Store {
  return {
    evaluate: (request: StoreRequest) =>
      degradedResponse(request.policies, request.failOpen ?? true, 1000, Date.now()),
    reset: () => undefined,
  };
}
