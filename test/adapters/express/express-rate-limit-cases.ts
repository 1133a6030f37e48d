// Option sets from express-rate-limit's documentation (readme, usage guide, configuration and helpers pages), each
// with a request sequence that walks it through its limit, its window's end and what the options change.
import type { Request, Response } from 'express';
import type { Step } from './express-rate-limit-harness.js';

/** What differs between the two sides' options: the library's own helper. */
export interface Library {
  readonly ipKeyGenerator: (ip: string, ipv6Subnet?: number | false) => string;
}

export interface Case {
  readonly name: string;
  // biome-ignore lint/suspicious/noExplicitAny: the options are express-rate-limit's, typed by each side's rateLimit
  readonly options: (library: Library) => Record<string, any>;
  readonly steps: readonly Step[];
  readonly property?: string;
  /** More limiters after the first, each with its own store, in front of the same routes. */
  // biome-ignore lint/suspicious/noExplicitAny: as `options`
  readonly stacked?: readonly Record<string, any>[];
  /** The app's 'trust proxy' setting; default 1. */
  readonly trustProxy?: unknown;
  /** The codes express-rate-limit reports for the case (none when left out), so that a silent pair cannot pass. */
  readonly reports?: readonly string[];
}

export const MINUTE = 60_000;
export const times = (n: number, step: Step = {}): Step[] => Array.from({ length: n }, () => step);
export const from = (ip: string, more: Step = {}): Step => ({
  ...more,
  headers: { 'x-forwarded-for': ip, ...more.headers },
});
const premium: Step = { headers: { 'x-premium': 'yes' } };
const isPremium = (req: Request) => req.get('x-premium') === 'yes';

/** The documentation's option sets; the checks and edges are in express-rate-limit-edge-cases.ts. */
export const DOC_CASES: Case[] = [
  {
    name: 'readme: 100 per 15 minutes, draft-8, no X- fields, IPv6 by /56',
    options: () => ({
      windowMs: 15 * MINUTE,
      limit: 100,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      ipv6Subnet: 56,
    }),
    steps: [...times(101), { advance: 15 * MINUTE }, {}],
  },
  {
    name: 'usage guide: standardHeaders true (draft-6), rolled over one millisecond after the window',
    options: () => ({ windowMs: 15 * MINUTE, limit: 100, standardHeaders: true, legacyHeaders: false }),
    steps: [...times(101), { advance: 15 * MINUTE - 1 }, {}, { advance: 1 }, {}],
  },
  {
    name: "readme of 7.x: draft-7's combined RateLimit field",
    options: () => ({ windowMs: 15 * MINUTE, limit: 100, standardHeaders: 'draft-7', legacyHeaders: false }),
    steps: [...times(102), { advance: 7 * MINUTE }, {}, { advance: 8 * MINUTE }, {}],
  },
  {
    name: 'windowMs alone: the default limit of 5, the X-RateLimit fields in epoch seconds',
    options: () => ({ windowMs: 15 * MINUTE }),
    steps: [...times(7), { advance: 15 * MINUTE }, {}],
  },
  {
    name: 'limit alone: the default window of one minute, denied hits counted past the limit',
    options: () => ({ limit: 2 }),
    steps: [...times(4), { advance: 30_000 }, {}, { advance: 29_750 }, {}, { advance: 250 }, {}],
  },
  {
    name: 'max, the older name of limit',
    options: () => ({ windowMs: MINUTE, max: 3 }),
    steps: [...times(4), { advance: MINUTE }, {}],
  },
  {
    name: 'limit as an async function of the request (the isPremium example), on one count',
    options: () => ({
      windowMs: 60 * MINUTE,
      limit: async (req: Request) => (isPremium(req) ? 10 : 5),
      standardHeaders: 'draft-7',
    }),
    steps: [...times(6), ...times(5, premium), {}],
  },
  {
    name: 'message as an async function of the request',
    options: () => ({
      windowMs: 60 * MINUTE,
      limit: 1,
      message: async (req: Request) =>
        isPremium(req)
          ? 'You can only make 10 requests every hour.'
          : 'You can only make 5 requests every hour.',
    }),
    steps: [{}, {}, premium],
  },
  {
    name: 'message as an object, sent as JSON',
    options: () => ({
      windowMs: MINUTE,
      limit: 1,
      message: { error: 'Too many requests, try again later.' },
    }),
    steps: [{}, {}],
  },
  {
    name: 'handler from the docs: res.status(options.statusCode).send(options.message), with a 503',
    options: () => ({
      windowMs: MINUTE,
      limit: 1,
      statusCode: 503,
      message: 'Busy, come back later.',
      handler: (_req: Request, res: Response, _next: unknown, options: Record<string, unknown>) =>
        res.status(options.statusCode as number).send(options.message),
    }),
    steps: [{}, {}, { advance: MINUTE }, {}],
  },
  {
    name: 'handler reading the resolved options and the figures on the request',
    options: () => ({
      windowMs: 2 * MINUTE,
      limit: async () => 2,
      standardHeaders: 'draft-6',
      handler: (req: Request, res: Response, _next: unknown, options: Record<string, unknown>) => {
        const { windowMs, statusCode, message, legacyHeaders, standardHeaders, requestPropertyName } =
          options;
        res.status(429).json({
          windowMs,
          limitIsFunction: typeof options.limit === 'function',
          statusCode,
          message,
          legacyHeaders,
          standardHeaders,
          requestPropertyName,
          figures: (req as Request & { rateLimit?: unknown }).rateLimit,
        });
      },
    }),
    steps: times(4),
  },
  {
    name: 'skip: an allowlist of addresses',
    options: () => ({
      windowMs: MINUTE,
      limit: 1,
      skip: (req: Request) => ['192.168.0.56', '192.168.0.21'].includes(req.ip ?? ''),
    }),
    steps: [
      from('192.168.0.56'),
      from('192.168.0.56'),
      from('10.0.0.1'),
      from('10.0.0.1'),
      from('192.168.0.21'),
    ],
  },
  {
    name: 'skipFailedRequests: failures and denials given back, successes counted',
    options: () => ({ windowMs: MINUTE, limit: 2, skipFailedRequests: true, standardHeaders: 'draft-7' }),
    steps: [...times(3, { path: '/fail' }), {}, {}, {}, {}, { path: '/fail' }, { advance: MINUTE }, {}],
  },
  {
    name: "skipSuccessfulRequests: a login form's failures only",
    options: () => ({ windowMs: 15 * MINUTE, limit: 3, skipSuccessfulRequests: true }),
    steps: [...times(3), ...times(4, { path: '/fail' }), {}, { advance: 15 * MINUTE }, {}],
  },
  {
    name: 'skipFailedRequests: a client that leaves before its response is given back as it leaves',
    options: () => ({ windowMs: MINUTE, limit: 2, skipFailedRequests: true, standardHeaders: 'draft-7' }),
    steps: [...times(3, { abandon: true }), {}, {}, {}],
  },
  {
    name: 'skipSuccessfulRequests: a client that leaves before its response is counted',
    options: () => ({ windowMs: MINUTE, limit: 3, skipSuccessfulRequests: true }),
    steps: [...times(3, { abandon: true }), {}, {}],
  },
  {
    name: 'requestWasSuccessful: below 500 is a success (a 404 counts as one)',
    options: () => ({
      windowMs: MINUTE,
      limit: 2,
      skipFailedRequests: true,
      requestWasSuccessful: (_req: Request, res: Response) => res.statusCode < 500,
    }),
    steps: [{ path: '/missing' }, { path: '/fail' }, { path: '/fail' }, {}, {}, { path: '/missing' }],
  },
  {
    name: 'a failing request still running when its window ends is not given back to the next window',
    options: () => ({ windowMs: MINUTE, limit: 2, skipFailedRequests: true }),
    steps: [{ path: '/held/a' }, { advance: MINUTE }, {}, { release: 'a' }, {}, {}],
  },
  {
    name: 'keyGenerator: an API key, else the address through ipKeyGenerator (the helpers page)',
    options: ({ ipKeyGenerator }) => ({
      windowMs: MINUTE,
      limit: 2,
      standardHeaders: 'draft-8',
      keyGenerator: (req: Request) => req.get('x-api-key') ?? ipKeyGenerator(req.ip ?? '', 56),
    }),
    steps: [
      ...times(3, { headers: { 'x-api-key': 'alpha' } }),
      { headers: { 'x-api-key': 'beta' } },
      from('2001:db8:1:2::10'),
      from('2001:db8:1:3::99'),
      from('2001:db8:1:4::1'),
    ],
  },
  {
    name: 'requestPropertyName: the figures under another name',
    options: () => ({ windowMs: MINUTE, limit: 2, requestPropertyName: 'rateLimitInfo' }),
    property: 'rateLimitInfo',
    steps: times(3),
  },
  {
    name: 'draft-6 beside the X-RateLimit fields (legacyHeaders left on)',
    options: () => ({ windowMs: 10 * MINUTE, limit: 2, standardHeaders: 'draft-6' }),
    steps: [...times(3), { advance: 5 * MINUTE + 1 }, {}],
  },
  {
    name: 'identifier: a named policy in draft-8',
    options: () => ({ windowMs: 90_000, limit: 2, standardHeaders: 'draft-8', identifier: 'general' }),
    steps: times(3),
  },
  {
    name: 'identifier as a function of the request, and the default name for a window of hours',
    options: () => ({
      windowMs: 2 * 60 * MINUTE,
      limit: 2,
      standardHeaders: 'draft-8',
      identifier: (req: Request) => req.get('x-plan') ?? '2-in-2hrs',
    }),
    steps: [{ headers: { 'x-plan': 'free-plan' } }, {}, {}],
  },
  {
    name: 'IPv6 clients of one /56 share a count by default',
    options: () => ({ windowMs: MINUTE, limit: 1, standardHeaders: 'draft-8' }),
    steps: [
      from('2001:db8:1:2::10'),
      from('2001:db8:1:2::99'),
      from('2001:db8:1:3::1'),
      from('203.0.113.10'),
    ],
  },
  {
    name: 'ipv6Subnet: false, each IPv6 address alone (an IPv4-mapped one read as IPv4)',
    options: () => ({ windowMs: MINUTE, limit: 1, ipv6Subnet: false }),
    steps: [
      from('2001:db8:1:2::10'),
      from('2001:db8:1:2::99'),
      from('2001:db8:1:2::10'),
      from('::ffff:1.2.3.4'),
    ],
  },
  {
    name: 'ipv6Subnet as a function of the request',
    options: () => ({
      windowMs: MINUTE,
      limit: 1,
      standardHeaders: 'draft-8',
      ipv6Subnet: (req: Request) => (req.get('x-strict') === 'yes' ? 48 : 64),
    }),
    steps: [
      from('2001:db8:1:2::10'),
      from('2001:db8:1:3::10'),
      from('2001:db8:1:4::10', { headers: { 'x-strict': 'yes' } }),
      from('198.51.100.7', { headers: { 'x-strict': 'yes' } }),
    ],
  },
  {
    name: 'retryAfter: a fixed advisory wait in place of the window',
    options: () => ({ windowMs: 10 * MINUTE, limit: 1, retryAfter: 30, standardHeaders: 'draft-7' }),
    steps: [{}, {}, { advance: MINUTE }, {}],
  },
  {
    name: 'validate: one check off, the rest on (the validate example)',
    options: () => ({ windowMs: MINUTE, limit: 2, validate: { xForwardedForHeader: false, default: true } }),
    steps: [...times(3), from('203.0.113.9')],
  },
  {
    name: 'limit 0 blocks every request',
    reports: ['WRN_ERL_MAX_ZERO'],
    options: () => ({ windowMs: MINUTE, limit: 0, standardHeaders: 'draft-6' }),
    steps: [{}, {}, { advance: MINUTE }, {}],
  },
];
