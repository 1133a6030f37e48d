// GraphQL and WebSocket contexts, in tollgate/nestjs-throttler and in tollgate/nestjs: a real ws gateway, and
// GraphQL execution contexts built as Nest builds them for a resolver.
import assert from 'node:assert/strict';
import { createRequire, Module } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  Injectable,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { WsAdapter } from '@nestjs/platform-ws';
import * as websockets from '@nestjs/websockets';
import { WebSocket } from 'ws';
import { RateLimitException, RateLimitGuard, TollgateModule } from '../../../src/adapters/nestjs/nestjs.js';
import * as dropIn from '../../../src/adapters/nestjs/throttler/index.js';
import {
  ThrottlerException,
  ThrottlerGuard,
  ThrottlerModule,
} from '../../../src/adapters/nestjs/throttler/index.js';
import { fixedWindow } from '../../../src/policies/fixed-window.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { create, decorate, PLATFORMS, type Platform } from './nestjs-app.js';
import { original } from './throttler-original.js';

// In a plain Node process a require of @nestjs/websockets gives the app's own instance; the test runner's loader
// would compile a copy, whose WsException Nest's filter could not recognise.
const require = createRequire(import.meta.url);
const wsFile = require.resolve('@nestjs/websockets');
const shared = new Module(wsFile);
shared.exports = websockets;
shared.loaded = true;
require.cache[wsFile] = shared;

const { SubscribeMessage, WebSocketGateway } = websockets;
const LIMIT = 2;

/** The module and guard of each package, limiting to LIMIT a minute. */
const FLAVOURS: readonly (readonly [name: string, module: () => unknown, guard: Type<CanActivate>])[] = [
  [
    'tollgate/nestjs-throttler',
    () => ThrottlerModule.forRoot([{ ttl: 60_000, limit: LIMIT }]),
    ThrottlerGuard,
  ],
  [
    'tollgate/nestjs',
    () =>
      TollgateModule.forRoot({
        policy: fixedWindow({ limit: LIMIT, windowMs: 60_000 }),
        store: new MemoryStore(),
      }),
    RateLimitGuard,
  ],
];

function moduleOf(imports: unknown[], providers: unknown[]): Type {
  class AppModule {}
  Reflect.defineMetadata('imports', imports, AppModule);
  Reflect.defineMetadata('providers', providers, AppModule);
  return AppModule;
}

/** Sends `count` messages on one connection, and resolves with each answer the gateway sent. */
async function messages(url: string, count: number): Promise<unknown[]> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const answers: unknown[] = [];
  const all = new Promise<void>((resolve) =>
    socket.on('message', (data) => {
      answers.push(JSON.parse(String(data)));
      if (answers.length === count) resolve();
    }),
  );
  for (let i = 0; i < count; i++) socket.send(JSON.stringify({ event: 'ping', data: i }));
  await all;
  socket.close();
  return answers;
}

for (const [name, module, guard] of FLAVOURS) {
  describe(`${name} on a WebSocket gateway`, () => {
    let app: INestApplication;
    let url: string;
    before(async () => {
      class PingGateway {
        ping(_client: unknown, data: number) {
          return { event: 'pong', data };
        }
      }
      decorate(PingGateway, [WebSocketGateway()], { ping: [SubscribeMessage('ping'), UseGuards(guard)] });
      app = await create(moduleOf([module()], [PingGateway]), PLATFORMS[0] as Platform);
      app.useWebSocketAdapter(new WsAdapter(app));
      await app.listen(0, '127.0.0.1');
      url = `ws://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    });
    after(() => app.close());

    it('answers the messages within the limit, then sends the client an exception', async () => {
      const answers = (await messages(url, LIMIT + 2)) as { event: string; data: Record<string, unknown> }[];
      // A refusal may overtake an answer: each message is handled on its own.
      const pongs = answers.filter(({ event }) => event === 'pong').map(({ data }) => data);
      assert.deepEqual(pongs.sort(), [0, 1]);
      const refusals = answers.filter(({ event }) => event !== 'pong');
      assert.equal(refusals.length, 2);
      for (const { event, data } of refusals) {
        assert.equal(event, 'exception');
        // The throttler's message (with the pattern and data Nest adds), or the gate's body as it is.
        if (name === 'tollgate/nestjs-throttler') {
          assert.deepEqual(
            { ...data, cause: undefined },
            { status: 'error', message: 'ThrottlerException: Too Many Requests', cause: undefined },
          );
          assert.equal((data.cause as { pattern: string }).pattern, 'ping');
        } else assert.equal(data.message, 'Too many requests, please try again later.');
      }
    });

    it('counts per client address: a second connection from it is limited too', async () => {
      const [answer] = (await messages(url, 1)) as { event: string }[];
      assert.equal(answer?.event, 'exception');
    });
  });
}

// biome-ignore lint/suspicious/noExplicitAny: a socket of any library, read as code written for the original reads it.
type Socket = Record<string, any>;

/** A guard of `api`'s, tracking by a property of the socket itself, as code written for the original reads it. */
function socketTrackerGuard(api: typeof original, tracker: (socket: Socket) => string): Type {
  class SocketTrackerGuard extends api.ThrottlerGuard {
    protected override async getTracker(req: Socket): Promise<string> {
      return tracker(req);
    }
  }
  Injectable()(SocketTrackerGuard);
  return SocketTrackerGuard;
}

const APIS = [
  ['@nestjs/throttler', original],
  ['tollgate/nestjs-throttler', dropIn as unknown as typeof original],
] as const;

describe('a getTracker override written for @nestjs/throttler, on a real ws gateway', () => {
  it('is handed the client socket, as in the original: `req._socket.remoteAddress` counts the same', async () => {
    const pongs: unknown[] = [];
    for (const [name, api] of APIS) {
      const guard = socketTrackerGuard(api, (socket) => socket._socket.remoteAddress);
      class PingGateway {
        ping(_client: unknown, data: number) {
          return { event: 'pong', data };
        }
      }
      decorate(PingGateway, [WebSocketGateway()], { ping: [SubscribeMessage('ping'), UseGuards(guard)] });
      const module = api.ThrottlerModule.forRoot([{ ttl: 60_000, limit: LIMIT }]);
      const app = await create(moduleOf([module], [PingGateway]), PLATFORMS[0] as Platform);
      app.useWebSocketAdapter(new WsAdapter(app));
      await app.listen(0, '127.0.0.1');
      try {
        const url = `ws://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
        const answers = (await messages(url, LIMIT + 2)) as { event: string; data: { message?: string } }[];
        pongs.push(
          answers
            .filter(({ event }) => event === 'pong')
            .map(({ data }) => data)
            .sort(),
        );
        const refusals = answers.filter(({ event }) => event !== 'pong');
        assert.equal(refusals.length, 2, name);
        // The original's HttpException reaches a gateway as an internal error; the drop-in's is the throttler's.
        if (api !== original)
          for (const { data } of refusals)
            assert.equal(data.message, 'ThrottlerException: Too Many Requests');
      } finally {
        await app.close();
      }
    }
    assert.deepEqual(pongs, [
      [0, 1],
      [0, 1],
    ]);
  });
});

describe('GraphQL execution contexts', () => {
  class Resolver {
    items() {
      return [];
    }
  }
  /** A resolver's context as Nest builds it: root, args, the GraphQL context, info. */
  function gqlContext(context: Record<string, unknown>): ExecutionContext {
    const host = new ExecutionContextHost([{}, {}, context, {}], Resolver, Resolver.prototype.items);
    host.setType('graphql');
    return host;
  }

  for (const platform of PLATFORMS)
    for (const [name, module, guard] of FLAVOURS)
      it(`${name} counts the GraphQL context's request and sets headers on its response (${platform.name})`, async () => {
        const app = await create(moduleOf([module()], [guard]), platform);
        await app.init();
        try {
          const guardInstance = app.get(guard);
          const headers = new Map<string, unknown>();
          const setter = (header: string, value: unknown) => {
            headers.set(header.toLowerCase(), value);
          };
          const response =
            platform.name === 'Express'
              ? { res: { set: setter, header: setter } }
              : { reply: { header: setter, status: () => undefined } };
          const context = () => gqlContext({ req: { ip: '10.1.2.3', headers: {} }, ...response });
          for (let i = 0; i < LIMIT; i++) assert.equal(await guardInstance.canActivate(context()), true);
          assert.equal(String(headers.get('x-ratelimit-remaining')), '0');
          await assert.rejects(
            Promise.resolve(guardInstance.canActivate(context())),
            (error) => error instanceof ThrottlerException || error instanceof RateLimitException,
          );
          const other = gqlContext({ req: { ip: '10.9.9.9', headers: {} }, ...response });
          assert.equal(await guardInstance.canActivate(other), true);
        } finally {
          await app.close();
        }
      });
});

describe('Socket.IO clients, by their handshake', () => {
  class Gateway {
    ping() {}
  }
  /** A message's context as Nest builds it for a gateway: the client, then the data. */
  function wsContext(address: string): ExecutionContext {
    const client = { handshake: { address, headers: {} }, emit: () => true };
    const host = new ExecutionContextHost([client, {}], Gateway, Gateway.prototype.ping);
    host.setType('ws');
    return host;
  }

  for (const [name, module, guard] of FLAVOURS)
    it(`${name} counts each handshake address, refusing with a WsException`, async () => {
      const app = await create(moduleOf([module()], [guard]), PLATFORMS[0] as Platform);
      await app.init();
      try {
        const checked = app.get(guard);
        for (let i = 0; i < LIMIT; i++) assert.equal(await checked.canActivate(wsContext('10.0.0.7')), true);
        await assert.rejects(
          Promise.resolve(checked.canActivate(wsContext('10.0.0.7'))),
          websockets.WsException,
        );
        assert.equal(await checked.canActivate(wsContext('10.0.0.8')), true);
      } finally {
        await app.close();
      }
    });
});

describe("a Socket.IO client's own properties, read by a getTracker override", () => {
  class Gateway {
    ping() {}
  }
  it('track and count as in @nestjs/throttler, and a write lands on the socket', async () => {
    const admitted: boolean[][] = [];
    for (const [, api] of APIS) {
      const guard = socketTrackerGuard(api, (socket) => {
        socket.seen = true;
        return `${socket.id}@${socket.handshake.address}`;
      });
      const app = await create(
        moduleOf([api.ThrottlerModule.forRoot([{ ttl: 60_000, limit: LIMIT }])], [guard]),
        PLATFORMS[0] as Platform,
      );
      await app.init();
      const checked = app.get<CanActivate>(guard);
      const run: boolean[] = [];
      for (const [id, address] of [
        ['a', '10.0.0.7'],
        ['a', '10.0.0.7'],
        ['a', '10.0.0.7'],
        ['b', '10.0.0.7'],
      ]) {
        const client: Record<string, unknown> = { id, handshake: { address, headers: {} }, emit: () => true };
        const host = new ExecutionContextHost([client, {}], Gateway, Gateway.prototype.ping);
        host.setType('ws');
        run.push(await (checked.canActivate(host) as Promise<boolean>).catch(() => false));
        assert.equal(client.seen, true);
      }
      admitted.push(run);
      await app.close();
    }
    assert.deepEqual(admitted[1], admitted[0]);
    assert.deepEqual(admitted[0], [true, true, false, true]);
  });
});

describe("the drop-in's GraphQL context beside @nestjs/throttler's README override", () => {
  class Resolver {
    items() {
      return [];
    }
  }
  // The README's way: a guard that reads the GraphQL context's request and response itself.
  class GqlThrottlerGuard extends original.ThrottlerGuard {
    protected override getRequestResponse(context: ExecutionContext) {
      const { req, res } = context.getArgByIndex(2);
      return { req, res };
    }
  }
  Injectable()(GqlThrottlerGuard);

  it('sets the same headers and throws the same exceptions', async (t) => {
    // One clock for both, standing still: a slow machine must not end a window between two calls.
    t.mock.timers.enable({ apis: ['Date'], now: Date.UTC(2030, 0, 1) });
    const runs: unknown[][] = [];
    for (const [throttler, guard] of [
      [original, GqlThrottlerGuard],
      [dropIn, dropIn.ThrottlerGuard],
    ] as const) {
      const module = throttler.ThrottlerModule.forRoot([
        { ttl: 60_000, limit: LIMIT },
        { name: 'burst', ttl: 1000, limit: 1 },
      ]);
      const app = await create(moduleOf([module], [guard]), PLATFORMS[0] as Platform);
      await app.init();
      const checked = app.get<CanActivate>(guard as Type<CanActivate>);
      const seen: unknown[] = [];
      for (const ip of ['10.0.0.1', '10.0.0.1', '10.0.0.2', '10.0.0.1', '10.0.0.1']) {
        const headers: Record<string, unknown> = {};
        const res = {
          header: (header: string, value: unknown) => {
            headers[header] = value;
          },
        };
        const host = new ExecutionContextHost(
          [{}, {}, { req: { ip, headers: {} }, res }, {}],
          Resolver,
          Resolver.prototype.items,
        );
        host.setType('graphql');
        try {
          seen.push(await checked.canActivate(host), headers);
        } catch (error) {
          seen.push(
            (error as Error).constructor.name,
            (error as { getResponse(): unknown }).getResponse(),
            headers,
          );
        }
      }
      runs.push(seen);
      await app.close();
    }
    assert.deepEqual(runs[1], runs[0]);
    assert.ok(JSON.stringify(runs[0]).includes('ThrottlerException'));
  });
});
