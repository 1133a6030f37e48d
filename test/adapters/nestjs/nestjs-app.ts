// Nest apps for the NestJS tests: decorators applied as functions, each platform, an app listening on loopback.
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication, Type } from '@nestjs/common';
import { type AbstractHttpAdapter, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { ContractApp } from '../../../src/testing/adapter-contract.js';

/** A Nest platform: the HTTP adapter a fresh app runs on. */
export interface Platform {
  readonly name: string;
  readonly adapter: () => AbstractHttpAdapter;
  /** Runs `step` on each node:http request before Nest's routing (and so before any guard). */
  readonly beforeRoutes: (app: INestApplication, step: (req: IncomingMessage) => Promise<void>) => void;
}

export const PLATFORMS: readonly Platform[] = [
  {
    name: 'Express',
    adapter: () => new ExpressAdapter(),
    beforeRoutes: (app, step) =>
      app.use((req: IncomingMessage, _res: unknown, next: (error?: unknown) => void) => {
        step(req).then(() => next(), next);
      }),
  },
  {
    name: 'Fastify',
    adapter: () => new FastifyAdapter(),
    beforeRoutes: (app, step) =>
      (app.getHttpAdapter().getInstance() as FastifyInstance).addHook('onRequest', (request) =>
        step(request.raw),
      ),
  },
];

type MemberDecorator = MethodDecorator | PropertyDecorator;

/**
 * Decorates a class, then each of its methods, as TypeScript's experimental decorators would: tsx compiles
 * decorator syntax as standard decorators here, which Nest's decorators are not.
 */
export function decorate<T extends Type>(
  target: T,
  decorators: ClassDecorator[],
  methods: Record<string, readonly MemberDecorator[]> = {},
): T {
  for (const [name, onMethod] of Object.entries(methods)) {
    const descriptor = Object.getOwnPropertyDescriptor(target.prototype, name);
    Reflect.decorate([...onMethod], target.prototype, name, descriptor);
  }
  Reflect.decorate(decorators, target);
  return target;
}

export interface NestTestApp extends ContractApp {
  readonly app: INestApplication;
}

/** An app of `module` on `platform`, not yet started; an error creating it rejects (Nest's default exits). */
export function create(module: Type, platform: Platform): Promise<INestApplication> {
  return NestFactory.create(module, platform.adapter(), { logger: false, abortOnError: false });
}

/** An app of `module` on `platform`, set up by `setup` before it listens on an ephemeral loopback port. */
export async function start(
  module: Type,
  platform: Platform,
  setup: (app: INestApplication) => void = () => {},
): Promise<NestTestApp> {
  const app = await create(module, platform);
  setup(app);
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer();
  const { port } = server.address() as AddressInfo;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      // fetch keeps its sockets alive: dropped, so the server closes at once.
      const closed = app.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

/** Resolves once `condition` holds, re-checking on every turn of the event loop; fails after 5 s. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
