// The service's HTTP listener: /check for gateways' auth subrequests, /json, /healthcheck and /metrics, on node:http.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { configError, environmentError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import {
  hostOption,
  loggerOption,
  nonNegativeInteger,
  portOption,
  positiveInteger,
} from '../../core/validate.js';
import type { ServiceConfig } from '../config/types.js';
import type { ServiceObserver } from '../engine/observer.js';
import type { RateLimitRequest, RateLimitResponse } from '../protocol/messages.js';
import { type Outcome, type RequestResult, send, textAnswer } from './answer.js';
import { answerCheck } from './check-route.js';
import { answerJson } from './json-route.js';

export interface HttpServerOptions {
  /** The address to listen on, such as '127.0.0.1' or '0.0.0.0'. */
  readonly host: string;
  /** 0 picks a free port: read it back from the server. */
  readonly port: number;
  /** The decision engine; rejects with an ERR_TOLLGATE_ARGUMENT error for a malformed request. */
  readonly shouldRateLimit: (request: RateLimitRequest) => Promise<RateLimitResponse>;
  /** The configuration in force: the service loads one before it listens. */
  readonly config: () => ServiceConfig;
  /** Whether the service can answer (its store reachable, a configuration loaded), and why not. */
  readonly healthy: () => Promise<{ readonly ok: boolean; readonly reason?: string }>;
  /** The Prometheus exposition /metrics answers. */
  readonly metricsText: () => string;
  /** Told each /check and /json request's time and result. */
  readonly observer?: ServiceObserver;
  /** Where a request that fails unexpectedly is logged (it is answered 500). Default: console. */
  readonly logger?: Logger;
  /**
   * The most a request may take to arrive, headers and body (default 10,000 ms): a client that stalls longer is
   * answered 408 and dropped, so a slow body can neither pin a connection nor hold a drain for its whole grace.
   */
  readonly requestTimeoutMs?: number;
}

export interface HttpServer {
  /** The port it listens on (the one picked, when `port` was 0). */
  readonly port: number;
  /** Stops accepting, lets requests in flight finish for up to `graceMs`, then drops every connection. */
  close(graceMs: number): Promise<void>;
}

type Protocol = 'http' | 'json';

interface Route {
  /** The methods it answers; every method when absent. */
  readonly methods?: readonly string[];
  /** The protocol its requests are measured under, for the routes that decide. */
  readonly protocol?: Protocol;
  answer(req: IncomingMessage, path: string, query: URLSearchParams): Promise<Outcome>;
}

const NOT_FOUND: Outcome = {
  answer: textAnswer(404, 'not found: the routes are /check, /json, /healthcheck, /metrics'),
};

/** Starts listening; resolves once it does, rejects (ERR_TOLLGATE_CONFIG) when it cannot. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  checkOptions(options);
  const routes = routesOf(options);
  const logger = loggerOption(options.logger, console);
  const requestTimeout = positiveInteger('requestTimeoutMs', options.requestTimeoutMs ?? 10_000);
  let closing = false;
  const timeouts = {
    requestTimeout,
    headersTimeout: requestTimeout,
    // Node checks the timeouts this often (30 s by default): at most a second past the timeout.
    connectionsCheckingInterval: Math.min(1000, requestTimeout),
  };
  const server = createServer(timeouts, (req, res) => {
    void handle(req, res).catch((error: unknown) =>
      logger.error(error, '[tollgate] serve: observing failed'),
    );
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const target = req.url ?? '/';
    const at = target.indexOf('?');
    const path = at === -1 ? target : target.slice(0, at);
    const route = routes(path);
    let result: RequestResult | undefined;
    try {
      const outcome = await answerRoute(
        route,
        req,
        path,
        new URLSearchParams(at === -1 ? '' : target.slice(at + 1)),
      );
      result = outcome.result;
      send(res, outcome.answer, closing);
    } catch (error) {
      logger.error(error, `[tollgate] serve: ${req.method} ${path} failed`);
      result = 'error';
      sendFailure(res);
    }
    if (route?.protocol !== undefined && result !== undefined)
      options.observer?.request(route.protocol, performance.now() - started, result);
  }

  const port = await listen(server, options.host, options.port);
  return {
    port,
    async close(graceMs) {
      nonNegativeInteger('graceMs', graceMs);
      closing = true;
      return new Promise((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}

/** 500, whatever headers a failed answer had set; a response already under way can only be cut short. */
function sendFailure(res: ServerResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  send(res, textAnswer(500, 'the rate limit service failed to answer'), true);
}

function answerRoute(
  route: Route | undefined,
  req: IncomingMessage,
  path: string,
  query: URLSearchParams,
): Promise<Outcome> {
  if (route === undefined) return Promise.resolve(NOT_FOUND);
  const { methods } = route;
  if (methods !== undefined && !methods.includes(req.method ?? '')) {
    const answer = textAnswer(405, `${req.method} is not allowed here`, [['allow', methods.join(', ')]]);
    return Promise.resolve(route.protocol === undefined ? { answer } : { answer, result: 'invalid' });
  }
  return route.answer(req, path, query);
}

/** Throws a configuration error naming the first option that is wrong. */
function checkOptions(options: HttpServerOptions): void {
  if (typeof options !== 'object' || options === null)
    throw configError('options', 'must be an object', options);
  const { host, port, shouldRateLimit, config, healthy, metricsText, observer } = options;
  hostOption('host', host);
  portOption('port', port);
  for (const [name, value] of Object.entries({ shouldRateLimit, config, healthy, metricsText }))
    if (typeof value !== 'function') throw configError(name, 'must be a function', value);
  if (observer !== undefined && typeof observer?.request !== 'function')
    throw configError('observer', 'must be a ServiceObserver (with a request() method)');
}

/** The route of each path. */
function routesOf(options: HttpServerOptions): (path: string) => Route | undefined {
  const { shouldRateLimit, healthy, metricsText } = options;
  const check: Route = {
    protocol: 'http',
    answer: (req, path, query) => answerCheck(options, req, path, query),
  };
  const exact: Record<string, Route> = {
    '/json': { methods: ['POST'], protocol: 'json', answer: (req) => answerJson(shouldRateLimit, req) },
    '/healthcheck': { methods: ['GET', 'HEAD'], answer: () => health(healthy) },
    '/metrics': {
      methods: ['GET', 'HEAD'],
      answer: async () => ({
        answer: { status: 200, headers: [['content-type', PROMETHEUS_TEXT]], body: metricsText() },
      }),
    },
  };
  // Envoy's ext_authz adds its path prefix to the request's own path: /check/api/orders is a check too.
  return (path) =>
    path === '/check' || path.startsWith('/check/')
      ? check
      : Object.hasOwn(exact, path)
        ? exact[path]
        : undefined;
}

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

async function health(healthy: HttpServerOptions['healthy']): Promise<Outcome> {
  const { ok, reason } = await healthy();
  return { answer: ok ? textAnswer(200, 'OK') : textAnswer(503, reason ?? 'unhealthy') };
}

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error) =>
      reject(environmentError(`the HTTP server cannot listen on ${host}:${port}`, error, 'port')),
    );
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}
