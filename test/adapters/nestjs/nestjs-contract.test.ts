// The adapter contract on NestJS, on the Express and the Fastify platform: the guard throws, Nest's filters answer.
import { Readable } from 'node:stream';
import {
  type ArgumentsHost,
  Catch,
  Controller,
  type ExceptionFilter,
  Get,
  HttpException,
  Module,
  Req,
  Res,
  StreamableFile,
} from '@nestjs/common';
import { type AbstractHttpAdapter, HttpAdapterHost } from '@nestjs/core';
import { type HttpRequest, RateLimitException, TollgateModule } from '../../../src/adapters/nestjs/nestjs.js';
import {
  type MakeApp,
  type RoutePlan,
  runAdapterContract,
  shapedByApp,
  streamedChunks,
} from '../../../src/testing/adapter-contract.js';
import { decorate, PLATFORMS, type Platform, start } from './nestjs-app.js';

/** Acts out the contract's route plan on the platform's response; what it throws, Nest answers 500. */
async function serve(plan: RoutePlan, response: unknown, http: AbstractHttpAdapter): Promise<void> {
  const status = plan.status ?? 200;
  if (plan.verdict !== undefined) http.setHeader(response, 'x-verdict', plan.verdict);
  if (plan.stream) {
    const body = new StreamableFile(Readable.from(streamedChunks(plan)), { type: 'text/plain' });
    http.reply(response, body, status);
    return;
  }
  await plan.hold;
  if (plan.throws) throw new Error('route failed');
  http.reply(response, { ok: true }, status);
}

/** An exception filter, as a class Nest can tell apart from the others by what it catches. */
function filter(catches: new (...args: never[]) => Error, answer: ExceptionFilter['catch']) {
  class ContractFilter implements ExceptionFilter {
    catch(exception: unknown, host: ArgumentsHost) {
      return answer(exception, host);
    }
  }
  return new (decorate(ContractFilter, [Catch(catches)]))();
}

type ContractOptions = Parameters<MakeApp>[0];

async function contractApp(
  platform: Platform,
  { handler, beforeLimit, route, requestWasSuccessful, thrown = false, ...options }: ContractOptions,
) {
  let http: AbstractHttpAdapter | undefined;
  const adapter = () => http as AbstractHttpAdapter;
  class RootController {
    serve(request: HttpRequest, response: unknown) {
      return serve(route?.(request.rateLimit) ?? {}, response, adapter());
    }
  }
  decorate(RootController, [Controller()], { serve: [Get()] });
  Req()(RootController.prototype, 'serve', 0);
  Res()(RootController.prototype, 'serve', 1);
  const verdict =
    requestWasSuccessful === undefined
      ? {}
      : {
          requestWasSuccessful: (_request: HttpRequest, response: unknown) =>
            requestWasSuccessful(adapter().getHeader(response, 'x-verdict') || undefined),
        };
  class AppModule {}
  decorate(AppModule, [
    Module({
      imports: [TollgateModule.forRoot({ ...options, ...verdict, global: true })],
      controllers: [RootController],
    }),
  ]);
  return start(AppModule, platform, (app) => {
    http = app.get(HttpAdapterHost).httpAdapter;
    if (beforeLimit !== undefined) platform.beforeRoutes(app, beforeLimit);
    // The contract's handler, or the app's own error handling in thrown mode, as the filters a Nest app writes.
    if (handler !== undefined)
      app.useGlobalFilters(
        filter(RateLimitException, (exception, host) => {
          const { info } = exception as RateLimitException;
          const request = host.switchToHttp().getRequest<HttpRequest>();
          const answer = handler(info.decision, request.rateLimit);
          adapter().reply(host.switchToHttp().getResponse(), answer.body, answer.status);
        }),
      );
    if (thrown)
      app.useGlobalFilters(
        filter(HttpException, (exception, host) => {
          const shaped = shapedByApp((exception as HttpException).getStatus());
          adapter().reply(host.switchToHttp().getResponse(), shaped.body, shaped.status);
        }),
      );
  });
}

for (const platform of PLATFORMS)
  runAdapterContract(`NestJS on ${platform.name}`, (options) => contractApp(platform, options), {
    thrown: true,
  });
