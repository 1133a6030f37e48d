// Scenarios of the key a request counts under: allow lists, key generators, groups and the default address key.
import { times } from './fastify-rate-limit-harness.js';
import { byClient, client, limit, ok, plainRoutes, type Scenario } from './fastify-rate-limit-scenario.js';

export const KEY_SCENARIOS: readonly Scenario[] = [
  {
    name: 'allowList as an array, keyGenerator by header',
    options: () => ({ max: 1, allowList: ['vip'], keyGenerator: byClient }),
    steps: [...times(3, client('vip')), ...times(3, client('other')), client('third')],
  },
  {
    name: 'allowList as an async function of the request and key',
    options: () => ({
      max: 1,
      keyGenerator: byClient,
      allowList: async (req: { headers: Record<string, unknown> }, key: string) =>
        key === 'vip' || req.headers['x-pass'] === 'yes',
    }),
    steps: [
      ...times(3, client('vip')),
      ...times(2, client('other')),
      { url: '/', headers: { 'x-client': 'other', 'x-pass': 'yes' } },
    ],
  },
  {
    name: 'a keyGenerator giving a number, and one giving a promise',
    options: () => ({
      max: 1,
      keyGenerator: (req: { headers: Record<string, unknown> }) => Number(req.headers['x-client']),
    }),
    routes: (app) => {
      app.get('/', ok);
      app.get('/async', { config: limit({ max: 2, keyGenerator: async () => 'one' }) }, ok);
    },
    steps: [...times(2, client('1')), ...times(2, client('2')), ...times(3, '/async')],
  },
  {
    name: 'an empty key counts as any other, on a route and in a group',
    options: () => ({ max: 1, keyGenerator: () => '' }),
    routes: (app) => {
      app.get('/', ok);
      app.get('/grouped', { config: limit({ max: 2, groupId: 'team' }) }, ok);
    },
    steps: [...times(3, '/'), ...times(3, '/grouped')],
  },
  {
    name: 'hook: preHandler keys by what an earlier hook set',
    options: () => ({
      max: 1,
      hook: 'preHandler',
      keyGenerator: (req: { user?: string }) => req.user ?? 'anonymous',
    }),
    routes: (app) => {
      app.decorateRequest('user', undefined);
      app.addHook('preHandler', async (req) => {
        Object.assign(req, { user: req.headers['x-user'] });
      });
      plainRoutes(app);
    },
    steps: [
      ...times(2, { url: '/', headers: { 'x-user': 'ann' } }),
      ...times(2, { url: '/', headers: { 'x-user': 'bob' } }),
      ...times(2, '/'),
    ],
  },
  {
    name: 'groupId: a group joined to the key on each route of it',
    options: () => ({ max: 2, timeWindow: '1 minute' }),
    routes: (app) => {
      app.get('/g1', { config: limit({ max: 2, groupId: 'team' }) }, ok);
      app.get('/g2', { config: limit({ max: 2, groupId: 'team' }) }, ok);
      app.get('/other', { config: limit({ max: 2, groupId: 'other' }) }, ok);
    },
    steps: ['/g1', '/g2', '/g1', '/g2', '/g1', '/other', '/other', '/other'],
  },
  {
    name: 'the default key: IPv6 by its /64, only ::ffff: as IPv4, zone ids dropped, ipv6Subnet',
    options: () => ({ max: 1 }),
    routes: (app) => {
      app.get('/', ok);
      app.get('/wide', { config: limit({ max: 1, ipv6Subnet: 32 }) }, ok);
      app.get('/exact', { config: limit({ max: 1, ipv6Subnet: 128 }) }, ok);
    },
    steps: [
      { url: '/', remoteAddress: '2001:db8:1:2::1' },
      { url: '/', remoteAddress: '2001:DB8:1:2:ffff::9' },
      { url: '/', remoteAddress: '2001:db8:1:3::1' },
      { url: '/', remoteAddress: '::ffff:10.0.0.1' },
      { url: '/', remoteAddress: '10.0.0.1' },
      { url: '/', remoteAddress: '1.2.3.4' },
      { url: '/', remoteAddress: '::1.2.3.4' },
      { url: '/wide', remoteAddress: '2001:db8:1:2::1' },
      { url: '/wide', remoteAddress: '2001:db8:ffff::1' },
      { url: '/exact', remoteAddress: '9.8.7.6' },
      { url: '/exact', remoteAddress: '::9.8.7.6' },
      { url: '/exact', remoteAddress: 'fe80::1%eth0' },
      { url: '/exact', remoteAddress: 'fe80::1' },
    ],
  },
  {
    name: 'onExceeding and onExceeded on each route, with its key',
    options: () => ({ max: 1, keyGenerator: byClient }),
    routes: (app) => {
      plainRoutes(app);
      app.get('/c', { config: limit({ max: 2 }) }, ok);
    },
    steps: [client('x'), client('x', '/b'), client('y', '/c'), client('y', '/c'), client('y', '/c')],
  },
];
