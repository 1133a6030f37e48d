// Option sets beyond the documentation's: its checks and warnings, several limiters on one route, and edges of
// keys and limits, each with a request sequence that shows what it changes.
import type { Request } from 'express';
import { type Case, DOC_CASES, from, MINUTE, times } from './express-rate-limit-cases.js';

const byUser = { 'x-user': 'a' };

const EDGE_CASES: Case[] = [
  {
    name: 'both skip options at once: only requests in flight count',
    options: () => ({ windowMs: MINUTE, limit: 1, skipFailedRequests: true, skipSuccessfulRequests: true }),
    steps: [...times(3), { path: '/held/a' }, {}, { release: 'a' }, {}],
  },
  {
    name: 'a draft-8 name with quotes is written as given',
    options: () => ({ windowMs: MINUTE, limit: 1, standardHeaders: 'draft-8', identifier: 'my "api"' }),
    steps: times(2),
  },
  {
    name: 'a limit function giving a fraction is compared as it is',
    options: () => ({ windowMs: MINUTE, limit: () => 1.5 }),
    steps: times(3),
  },
  {
    name: 'draft-8 stacked: each limiter appends its policy to RateLimit and RateLimit-Policy',
    options: () => ({ windowMs: 15 * MINUTE, limit: 100, standardHeaders: 'draft-8', legacyHeaders: false }),
    stacked: [{ windowMs: MINUTE, limit: 5, standardHeaders: 'draft-8', legacyHeaders: false }],
    steps: [...times(7), { advance: MINUTE }, {}],
  },
  {
    name: 'two limiters on default stores count apart, each request once in each',
    options: () => ({ windowMs: MINUTE, limit: 2, standardHeaders: 'draft-7' }),
    stacked: [{ windowMs: MINUTE, limit: 3, requestPropertyName: 'second' }],
    steps: times(4),
  },
  {
    name: "standardHeaders 'draft-9': warned of, no standard fields, still limiting",
    reports: ['ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION'],
    options: () => ({ windowMs: MINUTE, limit: 1, standardHeaders: 'draft-9' }),
    steps: times(3),
  },
  {
    name: 'ipv6Subnet 48.5: warned of, IPv4 clients still limited',
    reports: ['ERR_ERL_IPV6_SUBNET'],
    options: () => ({ windowMs: MINUTE, limit: 1, ipv6Subnet: 48.5 }),
    steps: [from('203.0.113.1'), from('203.0.113.1'), from('203.0.113.2')],
  },
  {
    name: 'ipv6Subnet 16: warned of, and clients grouped by it',
    reports: ['ERR_ERL_IPV6_SUBNET'],
    options: () => ({ windowMs: MINUTE, limit: 1, standardHeaders: 'draft-8', ipv6Subnet: 16 }),
    steps: [from('2001:db8::1'), from('2001:aaa::1'), from('2002::1')],
  },
  {
    name: 'ipv6Subnet 100: warned of, and clients grouped by it',
    reports: ['ERR_ERL_IPV6_SUBNET'],
    options: () => ({ windowMs: MINUTE, limit: 1, ipv6Subnet: 100 }),
    steps: [from('2001:db8::1:0:1'), from('2001:db8::1:0:2'), from('2001:db8::1:1000:1')],
  },
  {
    name: "express-rate-limit 6's headers: false turns the X-RateLimit fields off",
    options: () => ({ windowMs: MINUTE, limit: 1, headers: false }),
    steps: times(2),
  },
  {
    name: 'an unknown option and a retired one are warned of, each once',
    reports: ['ERR_ERL_UNKNOWN_OPTION', 'WRN_ERL_DEPRECATED_ON_LIMIT_REACHED'],
    options: () => ({ windowMs: MINUTE, limit: 1, windowMS: 5, onLimitReached: () => undefined }),
    steps: times(2),
  },
  {
    name: 'validate: false silences every check',
    options: () => ({ windowMs: MINUTE, limit: 0, standardHeaders: 'draft-9', windowMS: 5, validate: false }),
    steps: [{}, from('203.0.113.9')],
    trustProxy: false,
  },
  {
    name: 'validate names an unknown check: warned of, the others still run',
    reports: ['ERR_ERL_UNKNOWN_VALIDATION'],
    options: () => ({ windowMs: MINUTE, limit: 1, validate: { noSuchCheck: false, ip: true } }),
    steps: times(2),
  },
  {
    name: 'a keyGenerator returning a number limits by it',
    options: () => ({
      windowMs: MINUTE,
      limit: 1,
      keyGenerator: (req: Request) => (req.get('x-user') ? 1 : 2),
    }),
    steps: [{ headers: byUser }, { headers: byUser }, {}, {}],
  },
  {
    name: 'a keyGenerator returning an empty key limits by it, and gives its hits back',
    options: () => ({ windowMs: MINUTE, limit: 1, keyGenerator: () => '', skipFailedRequests: true }),
    steps: [{ path: '/fail' }, ...times(3), { advance: MINUTE }, {}],
  },
  {
    name: 'a fractional windowMs: the window ends where its end, a date, drops the fraction',
    options: () => ({ windowMs: 1000 / 3, limit: 2, standardHeaders: 'draft-7' }),
    steps: [...times(3), { advance: 332 }, {}, { advance: 1 }, ...times(3)],
  },
  {
    name: 'trust proxy true: ERR_ERL_PERMISSIVE_TRUST_PROXY, once',
    reports: ['ERR_ERL_PERMISSIVE_TRUST_PROXY'],
    options: () => ({ windowMs: MINUTE, limit: 1 }),
    steps: [from('203.0.113.7'), from('203.0.113.7'), from('203.0.113.8')],
    trustProxy: true,
  },
  {
    name: 'trust proxy true with validate: { trustProxy: false }: not warned of',
    options: () => ({ windowMs: MINUTE, limit: 1, validate: { trustProxy: false } }),
    steps: [from('203.0.113.7'), from('203.0.113.7')],
    trustProxy: true,
  },
  {
    name: 'X-Forwarded-For while trust proxy is off: ERR_ERL_UNEXPECTED_X_FORWARDED_FOR on the first request only',
    reports: ['ERR_ERL_UNEXPECTED_X_FORWARDED_FOR'],
    options: () => ({ windowMs: MINUTE, limit: 3 }),
    steps: [from('203.0.113.7'), from('203.0.113.8')],
    trustProxy: false,
  },
];

/** Every case the differential tests run. */
export const CASES: Case[] = [...DOC_CASES, ...EDGE_CASES];
