// Two Nest apps side by side, one on @nestjs/throttler and one on the drop-in, asked the same requests in turn.
import assert from 'node:assert/strict';
import { mock } from 'node:test';
import { Controller, Get, Injectable, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type * as Throttler from '@nestjs/throttler';
import * as dropIn from '../../../src/adapters/nestjs/throttler/index.js';
import { decorate, type NestTestApp, PLATFORMS, type Platform, start } from './nestjs-app.js';
import { original } from './throttler-original.js';

/** What both packages export and a case uses: the drop-in is typed as the original is. */
export type ThrottlerApi = typeof Throttler;
export const APIS: readonly (readonly [name: string, api: ThrottlerApi])[] = [
  ['@nestjs/throttler', original],
  ['tollgate/nestjs-throttler', dropIn as unknown as ThrottlerApi],
];

export const T0 = Date.UTC(2030, 0, 1);
export const [EXPRESS, FASTIFY] = PLATFORMS as [Platform, Platform];

/** One request of a run: its path and headers, after the clock moved on by `advanceMs`. */
export interface Step {
  readonly path: string;
  readonly advanceMs?: number;
  readonly headers?: Record<string, string>;
}

export interface Case {
  readonly name: string;
  readonly options: (api: ThrottlerApi) => Throttler.ThrottlerModuleOptions;
  readonly steps: readonly Step[];
  /** The controllers (default: `controllers(api)`). */
  readonly controllers?: (api: ThrottlerApi) => Type[];
  /** The app's guard (default: the package's ThrottlerGuard). */
  readonly guard?: (api: ThrottlerApi) => Type;
  readonly platform?: Platform;
}

/** The answer as a client sees it, but the Date header (a clock of the platform's own). */
export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Plain routes, and routes under @Throttle and @SkipThrottle on the class and on the method, as the README
 * shows them; named throttlers `short` and `long` are overridden or skipped where a case has them.
 */
export function controllers(api: ThrottlerApi): Type[] {
  class AppController {
    plain() {
      return { ok: 'plain' };
    }
    strict() {
      return { ok: 'strict' };
    }
    skipped() {
      return { ok: 'skipped' };
    }
    skipShort() {
      return { ok: 'skip-short' };
    }
  }
  decorate(AppController, [Controller()], {
    plain: [Get('plain')],
    strict: [Get('strict'), api.Throttle({ default: { limit: 1, ttl: 2000 }, short: { limit: 1 } })],
    skipped: [Get('skipped'), api.SkipThrottle()],
    skipShort: [Get('skip-short'), api.SkipThrottle({ short: true })],
  });
  class ClassThrottled {
    inherits() {
      return { ok: 'class' };
    }
    own() {
      return { ok: 'method' };
    }
  }
  decorate(
    ClassThrottled,
    [Controller('class'), api.Throttle({ default: { limit: 2, ttl: 5000, blockDuration: 8000 } })],
    {
      inherits: [Get('inherits')],
      own: [Get('own'), api.Throttle({ default: { limit: 4, ttl: 1000 } })],
    },
  );
  class ClassSkipped {
    skipped() {
      return { ok: 'class-skipped' };
    }
    again() {
      return { ok: 'throttled-again' };
    }
  }
  decorate(ClassSkipped, [Controller('skipping'), api.SkipThrottle()], {
    skipped: [Get('skipped')],
    again: [Get('again'), api.SkipThrottle({ default: false })],
  });
  return [AppController, ClassThrottled, ClassSkipped];
}

/** An app of the case on `api`'s module and guard. */
export function startApp(
  api: ThrottlerApi,
  c: Case,
  extra: { storage?: unknown } = {},
): Promise<NestTestApp> {
  const options = c.options(api);
  const withStorage =
    extra.storage === undefined
      ? options
      : { ...(Array.isArray(options) ? { throttlers: options } : options), storage: extra.storage };
  class AppModule {}
  Reflect.decorate(
    [
      (target: Type) => {
        Reflect.defineMetadata(
          'imports',
          [api.ThrottlerModule.forRoot(withStorage as Throttler.ThrottlerModuleOptions)],
          target,
        );
        Reflect.defineMetadata('controllers', (c.controllers ?? controllers)(api), target);
        Reflect.defineMetadata(
          'providers',
          [{ provide: APP_GUARD, useClass: c.guard?.(api) ?? api.ThrottlerGuard }],
          target,
        );
      },
    ] as ClassDecorator[],
    AppModule,
  );
  return start(AppModule, c.platform ?? EXPRESS);
}

export async function ask(app: NestTestApp, step: Step): Promise<Answer> {
  const response = await fetch(app.url + step.path, { headers: step.headers ?? {} });
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers)
    if (name !== 'date' && name !== 'keep-alive') headers[name] = value;
  return { status: response.status, headers, body: await response.text() };
}

/** Runs the case's steps on both apps in turn, on one mocked clock, and asserts each answer the same. */
export async function runSideBySide(
  c: Case,
  make: (api: ThrottlerApi, index: number) => Promise<NestTestApp> = (api) => startApp(api, c),
): Promise<Answer[]> {
  mock.timers.enable({ apis: ['Date'], now: T0 });
  const apps: NestTestApp[] = [];
  try {
    for (const [index, [, api]] of APIS.entries()) apps.push(await make(api, index));
    const answers: Answer[] = [];
    for (const [i, step] of c.steps.entries()) {
      if (step.advanceMs !== undefined) mock.timers.tick(step.advanceMs);
      const [theirs, ours] = [
        await ask(apps[0] as NestTestApp, step),
        await ask(apps[1] as NestTestApp, step),
      ];
      assert.deepEqual(ours, theirs, `${c.name}: step ${i} (${step.path})`);
      answers.push(ours);
    }
    return answers;
  } finally {
    mock.timers.reset();
    for (const app of apps) await app.close();
  }
}

/** `count` requests to `path`, the first after `advanceMs`. */
export function burst(path: string, count: number, advanceMs = 0, headers?: Record<string, string>): Step[] {
  return Array.from({ length: count }, (_, i) => ({
    path,
    ...(i === 0 && advanceMs > 0 ? { advanceMs } : {}),
    ...(headers === undefined ? {} : { headers }),
  }));
}

/** A guard of the package's, extended as its README shows: tracked by a header, keyed by name and tracker. */
export function subclassGuard(api: ThrottlerApi): Type {
  class HeaderGuard extends api.ThrottlerGuard {
    protected override async getTracker(req: Record<string, unknown>): Promise<string> {
      return String((req.headers as Record<string, string>)['x-client'] ?? 'anonymous');
    }
    protected override generateKey(_context: unknown, tracker: string, name: string): string {
      return `${name}:${tracker}`;
    }
  }
  Injectable()(HeaderGuard);
  return HeaderGuard;
}
