// What a scenario of the drop-in's differential tests is, and the routes and requests scenarios share.
import type { FastifyInstance } from 'fastify';
import type { Events, Step } from './fastify-rate-limit-harness.js';

export interface Scenario {
  readonly name: string;
  /** The plugin's options; `onExceeding` and `onExceeded` are recorded unless given. */
  readonly options: (events: Events) => Record<string, unknown>;
  /** Routes after the plugin: default GET / and GET /b. */
  readonly routes?: (app: FastifyInstance, events: Events) => void;
  readonly steps: readonly Step[];
  /** Its counters depend on the plugin's local store (one per decorator limit): not for a shared store. */
  readonly localOnly?: boolean;
  /** Its bodies show a wait in ms: exact on a mocked clock, not where Redis keeps the time. */
  readonly showsTtl?: boolean;
}

export const ok = async () => 'ok';
/**
 * A route's `config.rateLimit` in the plugin's options. Typed loosely: the tests of `tollgate/fastify` give Fastify's
 * route config that plugin's own options, and one program holds both.
 */
export const limit = (rateLimit: Record<string, unknown> | false): never => ({ rateLimit }) as never;
export const client = (id: string, url = '/') => ({ url, headers: { 'x-client': id } });
export const byClient = (req: { headers: Record<string, unknown> }) => String(req.headers['x-client']);

export function plainRoutes(app: FastifyInstance): void {
  app.get('/', ok);
  app.get('/b', ok);
}
