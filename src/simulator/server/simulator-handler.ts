// The simulator on plain node:http: its page, its policy kinds, POST /api/simulate, the adaptive limits' simulation
// and, given a store, the live routes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type NodeRateLimit, rateLimit } from '../../adapters/node/node.js';
import { configError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { knownKeys, loggerOption } from '../../core/validate.js';
import type { PolicyDescription } from '../../policies/description.js';
import { isStore, type Store } from '../../stores/store.js';
import { policyCatalog } from '../engine/policy-catalog.js';
import { ADAPTIVE_MENU, answerAdaptive } from './adaptive-endpoint.js';
import { sendJson } from './http-json.js';
import { LIVE_ROUTES, type LiveRoute, liveLimiter } from './live-routes.js';
import { PAGE_FILES, sendPageFile } from './page-files.js';
import { type PolicyMenuEntry, policyMenu } from './policy-menu.js';
import { answerSimulate } from './simulate-endpoint.js';

export interface SimulatorHandlerOptions {
  /**
   * Serve the live routes (`LIVE_ROUTES`), each limited on this store by Tollgate's node:http adapter. Default:
   * not served, for an application that serves them with limiters of its own.
   */
  readonly liveStore?: Store;
  /** Where faults go (a page file that cannot be read, say) when there is no `next` to pass them to. Default console. */
  readonly logger?: Logger;
  /**
   * Policy kinds to offer beyond the built-in ones, by their descriptions (as `simulate()` takes them): the page
   * lists them and the endpoint simulates them. Default: the built-in kinds only.
   */
  readonly policies?: readonly PolicyDescription[];
}

/** Express's `next`: called without an argument when the handler has no answer for the request, or with a fault. */
type Next = (error?: unknown) => void;

/** A node:http request listener that is also Express middleware: requests it does not serve go to `next`, or get 404. */
export type SimulatorHandler = (req: IncomingMessage, res: ServerResponse, next?: Next) => void;

/** The list the page's live mode offers: each route's path and its limit in words. */
const LIVE_MENU = LIVE_ROUTES.map(({ path, label }) => ({ path, label }));

export function simulatorHandler(options: SimulatorHandlerOptions = {}): SimulatorHandler {
  if (typeof options !== 'object' || options === null) {
    throw configError('options', 'must be an object', options);
  }
  knownKeys('simulatorHandler', options, ['liveStore', 'logger', 'policies']);
  const logger = loggerOption(options.logger, console);
  const catalog = policyCatalog(options.policies);
  const served: Served = {
    live: liveLimits(options.liveStore, logger),
    menu: policyMenu(catalog),
    // A copy: the kinds offered stay those checked here, whatever becomes of the caller's array.
    policies: options.policies === undefined ? undefined : [...options.policies],
  };
  return (req, res, next) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    answer(req, res, path, served).then(
      (answered) => {
        if (answered) return;
        if (next === undefined)
          sendJson(res, 404, { error: `${req.method} ${path} is not a simulator route` });
        else next();
      },
      (error: unknown) => {
        // A client that went away mid-request is no fault of the simulator, and there is nobody to answer.
        if (clientGone(req, error)) return;
        if (next !== undefined) return next(error);
        logger.error(error, '[tollgate] the simulator failed to answer; answering 500');
        if (res.headersSent) res.destroy();
        else sendJson(res, 500, { error: 'the simulator failed to answer' });
      },
    );
  };
}

/** What one handler serves, fixed when it is created. */
interface Served {
  readonly live: ReadonlyMap<string, LiveLimit>;
  /** `GET /api/policies`: the kinds the page offers. */
  readonly menu: readonly PolicyMenuEntry[];
  /** The kinds beyond the built-in ones that the endpoint simulates. */
  readonly policies: readonly PolicyDescription[] | undefined;
}

/** Resolves false when the request is not one the simulator serves. */
async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  { live, menu, policies }: Served,
): Promise<boolean> {
  if (req.method === 'POST' && path === '/api/simulate') {
    await answerSimulate(req, res, policies);
    return true;
  }
  if (req.method === 'POST' && path === '/api/adaptive') {
    await answerAdaptive(req, res);
    return true;
  }
  // node:http sends no body in answer to HEAD, so HEAD is answered as GET.
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const page = PAGE_FILES.get(path);
  if (page !== undefined) {
    await sendPageFile(res, page);
    return true;
  }
  if (path === '/api/live-routes') {
    sendJson(res, 200, LIVE_MENU);
    return true;
  }
  if (path === '/api/policies') {
    sendJson(res, 200, menu);
    return true;
  }
  if (path === '/api/adaptive/scenarios') {
    sendJson(res, 200, ADAPTIVE_MENU);
    return true;
  }
  const route = live.get(path);
  if (route === undefined) return false;
  if (await route.limit(req, res)) {
    // A slow route works before it answers; the node:http adapter ends what the request holds once it is sent.
    if (route.holdMs > 0) await new Promise((done) => setTimeout(done, route.holdMs));
    sendJson(res, 200, { ok: true, route: path });
  }
  return true;
}

/** The request was aborted: its connection closed before the whole of it arrived. */
function clientGone(req: IncomingMessage, error: unknown): boolean {
  return (req.destroyed && !req.complete) || (error as NodeJS.ErrnoException | null)?.code === 'ECONNRESET';
}

interface LiveLimit {
  readonly limit: NodeRateLimit;
  readonly holdMs: number;
}

function liveLimits(store: Store | undefined, logger: Logger): ReadonlyMap<string, LiveLimit> {
  if (store === undefined) return new Map();
  if (!isStore(store)) {
    throw configError('liveStore', 'must implement evaluate() and reset() (a MemoryStore or RedisStore)');
  }
  return new Map(
    LIVE_ROUTES.map((route: LiveRoute) => [
      route.path,
      { limit: rateLimit({ limiter: liveLimiter(route, store), logger }), holdMs: route.holdMs ?? 0 },
    ]),
  );
}
