// The option sets of @fastify/rate-limit's README, each a scenario both plugins run request by request.
import type { FastifyPluginAsync } from 'fastify';
import { type Build, type Events, recorder, times, type Which } from './fastify-rate-limit-harness.js';
import { KEY_SCENARIOS } from './fastify-rate-limit-key-cases.js';
import { byClient, client, limit, ok, plainRoutes, type Scenario } from './fastify-rate-limit-scenario.js';

/** Options a side adds to the scenario's: its store. */
export type Extra = (events: Events, which: Which) => Record<string, unknown>;

/** Registers the plugin with the scenario's options (and `extra`'s), then its routes. */
export function build(scenario: Scenario, extra: Extra = () => ({})): Build {
  return async (app, plugin: FastifyPluginAsync, events, which) => {
    const callbacks = {
      onExceeding: recorder(events, 'onExceeding'),
      onExceeded: recorder(events, 'onExceeded'),
    };
    await app.register(plugin, { ...callbacks, ...scenario.options(events), ...extra(events, which) });
    (scenario.routes ?? plainRoutes)(app, events);
  };
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'global: max and timeWindow in ms, one count across routes, a window ending',
    options: () => ({ max: 3, timeWindow: 1000 }),
    steps: [
      ...times(2, '/'),
      '/b',
      '/',
      '/b',
      { tick: 999 },
      '/',
      { tick: 1 },
      '/',
      '/b',
      { tick: 5000 },
      '/',
    ],
  },
  {
    name: 'timeWindow in words, per route',
    options: () => ({ max: 1, timeWindow: '1 minute' }),
    routes: (app) => {
      app.get('/', ok);
      app.get('/seconds', { config: limit({ timeWindow: '2 seconds' }) }, ok);
      app.get('/half', { config: limit({ timeWindow: '1.5 s' }) }, ok);
      app.get('/hour', { config: limit({ timeWindow: '1h', max: 2 }) }, ok);
      app.get('/ms', { config: limit({ timeWindow: '500ms' }) }, ok);
      app.get('/days', { config: limit({ timeWindow: '3 days' }) }, ok);
    },
    steps: [
      ...['/', '/seconds', '/half', '/hour', '/ms', '/days'].flatMap((url) => times(3, url)),
      { tick: 1200 },
      ...['/seconds', '/half', '/ms'].flatMap((url) => times(2, url)),
    ],
  },
  {
    name: 'per route: config.rateLimit over the global options, and config.rateLimit: false',
    options: () => ({ max: 3, timeWindow: '1 minute' }),
    routes: (app) => {
      app.get('/', ok);
      app.get('/strict', { config: limit({ max: 1, timeWindow: 10_000 }) }, ok);
      app.get('/loose', { config: limit({ max: 4 }) }, ok);
      app.get('/free', { config: limit(false) }, ok);
      app.post('/strict', { config: limit({ max: 2 }) }, ok);
    },
    steps: [
      ...times(4, '/'),
      ...times(3, '/strict'),
      ...times(5, '/loose'),
      ...times(5, '/free'),
      ...times(3, { method: 'POST', url: '/strict' }),
      { tick: 10_000 },
      '/strict',
    ],
  },
  {
    name: 'global: false limits only the routes that ask',
    options: () => ({ global: false, max: 1 }),
    routes: (app) => {
      app.get('/', ok);
      app.get('/asks', { config: limit({ max: 2, timeWindow: '1 minute' }) }, ok);
    },
    steps: [...times(3, '/'), ...times(3, '/asks')],
  },
  {
    name: 'ban: 403 and onBanReach past max + ban',
    options: (events) => ({ max: 2, ban: 1, timeWindow: 1000, onBanReach: recorder(events, 'onBanReach') }),
    steps: [...times(6, '/'), { tick: 1000 }, ...times(2, '/')],
  },
  {
    name: 'ban: 0 bans at the first hit past max',
    options: (events) => ({ max: 1, ban: 0, onBanReach: recorder(events, 'onBanReach') }),
    steps: times(3, '/'),
  },
  {
    name: 'continueExceeding: each hit past max restarts the window',
    options: () => ({ max: 2, timeWindow: 1000, continueExceeding: true }),
    steps: [
      ...times(3, '/'),
      { tick: 800 },
      '/',
      { tick: 800 },
      '/',
      { tick: 999 },
      '/',
      { tick: 1000 },
      ...times(3, '/'),
    ],
  },
  {
    name: 'exponentialBackoff: the wait doubles with each hit past max',
    options: () => ({ max: 1, timeWindow: 1000, exponentialBackoff: true }),
    steps: [...times(5, '/'), { tick: 300 }, ...times(2, '/'), { tick: 1000 }, ...times(3, '/')],
  },
  {
    name: 'errorResponseBuilder: its object is what the error handler answers',
    showsTtl: true,
    options: () => ({
      max: 1,
      timeWindow: 90_000,
      errorResponseBuilder: (_req: unknown, context: Record<string, unknown>) => ({
        statusCode: 429,
        error: 'Slow down',
        message: `wait ${String(context.after)}`,
        context,
      }),
    }),
    steps: times(3, '/'),
  },
  {
    name: "the default rejection through the app's own error handler",
    options: () => ({ max: 1, timeWindow: 30_000 }),
    routes: (app) => {
      app.setErrorHandler((error: Error & { statusCode?: number }, _req, reply) =>
        reply.code(error.statusCode ?? 500).send({ handled: error.message, status: error.statusCode }),
      );
      plainRoutes(app);
    },
    steps: times(3, '/'),
  },
  {
    name: 'addHeaders and addHeadersOnExceeding toggles',
    options: () => ({
      max: 2,
      addHeaders: { 'x-ratelimit-limit': false, 'retry-after': false },
      addHeadersOnExceeding: { 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    }),
    steps: times(4, '/'),
  },
  {
    name: 'every header off',
    options: () => ({
      max: 1,
      addHeaders: {
        'x-ratelimit-limit': false,
        'x-ratelimit-remaining': false,
        'x-ratelimit-reset': false,
        'retry-after': false,
      },
      addHeadersOnExceeding: {
        'x-ratelimit-limit': false,
        'x-ratelimit-remaining': false,
        'x-ratelimit-reset': false,
      },
    }),
    steps: times(3, '/'),
  },
  {
    name: "enableDraftSpec: the draft's header names, toggles by those names",
    options: () => ({
      max: 2,
      timeWindow: '2 seconds',
      enableDraftSpec: true,
      addHeaders: { 'ratelimit-reset': false },
    }),
    steps: [...times(4, '/'), { tick: 1500 }, '/'],
  },
  {
    name: 'hook: preValidation and preParsing on routes of their own',
    options: () => ({ max: 1 }),
    routes: (app) => {
      app.post('/validated', { config: limit({ hook: 'preValidation' }) }, ok);
      app.post('/parsed', { config: limit({ hook: 'preParsing', max: 2 }) }, ok);
    },
    steps: [
      ...times(2, { method: 'POST', url: '/validated', payload: { a: 1 } }),
      ...times(3, { method: 'POST', url: '/parsed', payload: { a: 1 } }),
    ],
  },
  {
    name: 'max as an async function of the request and key, timeWindow as a function',
    options: () => ({
      keyGenerator: byClient,
      max: async (req: { headers: Record<string, unknown> }, key: string) =>
        req.headers['x-plan'] === 'pro' ? 3 : key.length,
      timeWindow: (_req: unknown, key: string) => (key === 'a' ? 2000 : 5000),
    }),
    steps: [
      ...times(3, client('a')),
      ...times(4, { url: '/', headers: { 'x-client': 'bb', 'x-plan': 'pro' } }),
      { tick: 2000 },
      client('a'),
      { url: '/', headers: { 'x-client': 'bb', 'x-plan': 'pro' } },
    ],
  },
  {
    name: 'fastify.rateLimit() as a route hook, with options and without',
    localOnly: true,
    options: () => ({ global: false, max: 3 }),
    routes: (app) => {
      app.get('/own', { onRequest: app.rateLimit({ max: 1, timeWindow: '1 minute' }) }, ok);
      app.get('/second', { preHandler: app.rateLimit({ max: 2 }) }, ok);
      app.get('/plain', { onRequest: app.rateLimit() }, ok);
      app.get('/twice', { config: limit({ max: 2 }), preHandler: app.rateLimit({ max: 1 }) }, ok);
    },
    steps: [...times(2, '/own'), ...times(3, '/second'), ...times(4, '/plain'), ...times(3, '/twice')],
  },
  {
    name: 'fastify.createRateLimit(): a check read without counting, then counted',
    localOnly: true,
    showsTtl: true,
    options: () => ({ global: false }),
    routes: (app) => {
      const check = app.createRateLimit({ max: 2, timeWindow: 3000 });
      app.get('/check', async (req) => {
        const peek = await check(req, { increment: false });
        const counted = await check(req);
        return { peek, counted };
      });
    },
    steps: [...times(3, '/check'), { tick: 3000 }, '/check'],
  },
  {
    name: 'a not-found handler limited by fastify.rateLimit()',
    localOnly: true,
    options: () => ({ max: 1 }),
    routes: (app) => {
      app.setNotFoundHandler({ preHandler: app.rateLimit({ max: 2 }) }, (_req, reply) =>
        reply.code(404).send({ missing: true }),
      );
      app.get('/', ok);
    },
    steps: [...times(3, '/nowhere'), ...times(2, '/')],
  },
  ...KEY_SCENARIOS,
];
