// The drop-in beside @nestjs/throttler, request by request on one clock: the README's option sets, on Express.
import { describe, it } from 'node:test';
import type { ExecutionContext } from '@nestjs/common';
import { burst, type Case, runSideBySide, subclassGuard } from './throttler-harness.js';

const cases: Case[] = [
  {
    name: 'one default throttler',
    options: () => [{ ttl: 60_000, limit: 3 }],
    steps: [
      ...burst('/plain', 5),
      ...burst('/plain', 2, 30_000),
      ...burst('/plain', 3, 30_500),
      ...burst('/strict', 3),
    ],
  },
  {
    name: 'several named throttlers, seconds/minutes helpers',
    options: (api) => [
      { name: 'short', ttl: api.seconds(1), limit: 3 },
      { name: 'medium', ttl: api.seconds(10), limit: 5 },
      { name: 'long', ttl: api.minutes(1), limit: 8 },
    ],
    steps: [
      ...burst('/plain', 4),
      ...burst('/plain', 2, 1000),
      ...burst('/plain', 3, 1200),
      ...burst('/skip-short', 3),
      ...burst('/strict', 2, 10_000),
      ...burst('/plain', 2, 50_000),
    ],
  },
  {
    name: '@Throttle on a class and on a method, blockDuration on the class',
    options: () => [{ ttl: 60_000, limit: 10 }],
    steps: [
      ...burst('/class/inherits', 4),
      ...burst('/class/inherits', 2, 4000),
      ...burst('/class/inherits', 2, 4500),
      ...burst('/class/own', 6),
      ...burst('/class/own', 3, 1000),
      ...burst('/strict', 2),
      ...burst('/strict', 2, 2000),
    ],
  },
  {
    name: '@SkipThrottle on a class, a method, and one name',
    options: () => ({
      throttlers: [
        { ttl: 10_000, limit: 2 },
        { name: 'short', ttl: 1000, limit: 1 },
      ],
    }),
    steps: [
      ...burst('/skipped', 4),
      ...burst('/skipping/skipped', 4),
      ...burst('/skipping/again', 3),
      ...burst('/skip-short', 3),
      ...burst('/skip-short', 1, 1000),
    ],
  },
  {
    name: 'blockDuration longer and shorter than ttl, and 0',
    options: () => [
      { name: 'blocking', ttl: 5000, limit: 2, blockDuration: 12_000 },
      { name: 'brief', ttl: 20_000, limit: 4, blockDuration: 2000 },
      { name: 'none', ttl: 3000, limit: 3, blockDuration: 0 },
    ],
    steps: [
      ...burst('/plain', 4),
      ...burst('/plain', 2, 3000),
      ...burst('/plain', 2, 4000),
      ...burst('/plain', 2, 6000),
      ...burst('/plain', 5, 1500),
      ...burst('/plain', 3, 2500),
      ...burst('/plain', 3, 20_000),
    ],
  },
  {
    name: 'ignoreUserAgents, common and per throttler',
    options: () => ({
      ignoreUserAgents: [/googlebot/i],
      throttlers: [
        { ttl: 60_000, limit: 2 },
        { name: 'bots', ttl: 60_000, limit: 1, ignoreUserAgents: [/bingbot/] },
      ],
    }),
    steps: [
      ...burst('/plain', 3, 0, { 'user-agent': 'Googlebot/2.1' }),
      ...burst('/plain', 3, 0, { 'user-agent': 'bingbot' }),
      ...burst('/plain', 3, 0, { 'user-agent': 'curl/8' }),
    ],
  },
  {
    name: 'skipIf, common and per throttler',
    options: () => ({
      skipIf: (context: ExecutionContext) =>
        context.switchToHttp().getRequest().headers['x-internal'] === 'yes',
      throttlers: [
        { ttl: 60_000, limit: 2 },
        {
          name: 'public',
          ttl: 60_000,
          limit: 3,
          skipIf: (context: ExecutionContext) =>
            context.switchToHttp().getRequest().headers['x-admin'] === 'yes',
        },
      ],
    }),
    steps: [
      ...burst('/plain', 3, 0, { 'x-internal': 'yes' }),
      ...burst('/plain', 4, 0, { 'x-admin': 'yes' }),
      ...burst('/plain', 4),
    ],
  },
  {
    name: 'getTracker and generateKey as options',
    options: () => ({
      getTracker: (req: Record<string, { [name: string]: string }>) =>
        req.headers?.['x-api-key'] ?? String(req.ip),
      generateKey: (context: ExecutionContext, tracker: string, name: string) =>
        `${context.getClass().name}:${name}:${tracker}`,
      throttlers: [
        { ttl: 60_000, limit: 2 },
        {
          name: 'per-route',
          ttl: 60_000,
          limit: 3,
          generateKey: (_c: ExecutionContext, t: string) => `route:${t}`,
        },
      ],
    }),
    steps: [
      ...burst('/plain', 3, 0, { 'x-api-key': 'alpha' }),
      ...burst('/plain', 2, 0, { 'x-api-key': 'beta' }),
      ...burst('/class/inherits', 2, 0, { 'x-api-key': 'alpha' }),
      ...burst('/plain', 3),
    ],
  },
  {
    name: 'a generateKey that gives the empty key',
    options: () => ({ generateKey: () => '', throttlers: [{ ttl: 60_000, limit: 2 }] }),
    steps: [...burst('/plain', 3), ...burst('/strict', 1)],
  },
  {
    name: 'durations with a fraction of a millisecond',
    options: () => [
      { ttl: 1500.5, limit: 2 },
      { name: 'blocking', ttl: 2000.25, limit: 3, blockDuration: 2500.5 },
    ],
    steps: [
      ...burst('/plain', 3),
      ...burst('/plain', 2, 1500),
      ...burst('/plain', 2, 1),
      ...burst('/plain', 2, 2499),
      ...burst('/plain', 2, 1),
    ],
  },
  {
    name: 'a guard extended to track by a header and key by name',
    options: () => [{ ttl: 60_000, limit: 2 }],
    guard: subclassGuard,
    steps: [
      ...burst('/plain', 3, 0, { 'x-client': 'one' }),
      ...burst('/strict', 2, 0, { 'x-client': 'one' }),
      ...burst('/plain', 2, 0, { 'x-client': 'two' }),
    ],
  },
  {
    name: 'errorMessage as a string',
    options: () => ({ errorMessage: 'Slow down', throttlers: [{ ttl: 60_000, limit: 1 }] }),
    steps: burst('/plain', 3),
  },
  {
    name: 'errorMessage as a function of the limit detail',
    options: () => ({
      errorMessage: (context: ExecutionContext, d: Record<string, unknown>) =>
        `${context.getHandler().name} ${d.limit}/${d.ttl} ${d.totalHits} ${d.timeToExpire} ${d.isBlocked} ` +
        `${d.timeToBlockExpire} ${d.tracker} ${d.key}`,
      throttlers: [
        { ttl: 10_000, limit: 2 },
        { name: 'nb', ttl: 4000, limit: 3, blockDuration: 0 },
      ],
    }),
    steps: [...burst('/plain', 4), ...burst('/plain', 2, 1500), ...burst('/plain', 2, 3000)],
  },
  {
    name: 'setHeaders false, common and per throttler',
    options: () => ({
      setHeaders: false,
      throttlers: [
        { ttl: 60_000, limit: 2 },
        { name: 'shown', ttl: 60_000, limit: 3, setHeaders: true },
      ],
    }),
    steps: burst('/plain', 4),
  },
  {
    name: 'limits and ttls as functions of the request, numeric text',
    options: () => [
      {
        ttl: (context: ExecutionContext) => (context.getClass().name === 'ClassSkipped' ? 2000 : 9000),
        limit: (context: ExecutionContext) =>
          context.switchToHttp().getRequest().headers['x-plan'] === 'pro' ? 5 : 2,
      },
      { name: 'text', ttl: 3000, limit: '4' as unknown as number },
    ],
    steps: [
      ...burst('/plain', 3),
      ...burst('/plain', 4, 0, { 'x-plan': 'pro' }),
      ...burst('/skipping/again', 3, 2500),
    ],
  },
];

describe('@nestjs/throttler and tollgate/nestjs-throttler side by side (Express)', () => {
  for (const c of cases) it(c.name, () => runSideBySide(c).then(() => {}));
});
