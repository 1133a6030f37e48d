// The gRPC server with real clients (protobufjs through @grpc/proto-loader, from the shipped proto files):
// every field both ways, unknown fields, malformed and oversize requests, failing decisions, health, shutdown.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as grpc from '@grpc/grpc-js';
import { argumentError, storeError } from '../../../src/core/errors.js';
import {
  type GrpcServer,
  type GrpcServerOptions,
  startGrpcServer,
} from '../../../src/service/grpc/grpc-server.js';
import type { CallResult } from '../../../src/service/grpc/rls-service.js';
import type { RateLimitRequest, RateLimitResponse } from '../../../src/service/protocol/messages.js';
import {
  call,
  extendedClient,
  fromProtoResponse,
  healthClient,
  protoRequest,
  rawClient,
  rlsClient,
} from './grpc-fixture.js';

const RLS = 'envoy.service.ratelimit.v3.RateLimitService';
const Status = { CANCELLED: 1, INVALID_ARGUMENT: 3, NOT_FOUND: 5, UNAVAILABLE: 14 };

const RESPONSE: RateLimitResponse = {
  overallCode: 2,
  statuses: [
    {
      code: 2,
      currentLimit: { name: 'per-ip', requestsPerUnit: 4_294_967_295, unit: 7 },
      limitRemaining: 0,
      durationUntilResetMs: 86_400_000 * 365 + 1,
    },
    { code: 1, limitRemaining: 4_294_967_295 },
    {
      code: 1,
      currentLimit: { name: '', requestsPerUnit: 10, unit: 1 },
      limitRemaining: 9,
      durationUntilResetMs: 0,
    },
  ],
  responseHeadersToAdd: [
    { key: 'x-ratelimit-limit', value: '10, 10;w=1' },
    { key: 'x-note', value: 'dépassé ⛔ 𝄞' },
  ],
  requestHeadersToAdd: [{ key: 'x-tollgate', value: 'over' }],
  rawBody: new TextEncoder().encode('{"error":"too many requests"}'),
};

/** A started server whose decision is `decide`, recording the requests and the reports it got. */
class Harness {
  readonly requests: RateLimitRequest[] = [];
  readonly reports: [number, CallResult][] = [];
  readonly errors: unknown[] = [];
  decide: (request: RateLimitRequest) => Promise<RateLimitResponse> = async () => RESPONSE;
  serving = true;
  server!: GrpcServer;
  private clock = 0;

  async start(options: Partial<GrpcServerOptions> = {}): Promise<this> {
    this.server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      shouldRateLimit: (request) => {
        this.requests.push(request);
        return this.decide(request);
      },
      serving: () => this.serving,
      onRequest: (ms, result) => this.reports.push([ms, result]),
      onError: (error) => this.errors.push(error),
      // Each reading 5 ms after the last: a call takes 5 ms, whatever the machine.
      now: () => (this.clock += 5),
      ...options,
    });
    return this;
  }
}

function grpcError(error: unknown): { code: number; details: string } {
  return error as grpc.ServiceError;
}

async function refusedWith(pending: Promise<unknown>, code: number, details?: RegExp): Promise<void> {
  await assert.rejects(pending, (error) => {
    assert.equal(grpcError(error).code, code, grpcError(error).details);
    if (details !== undefined) assert.match(grpcError(error).details, details);
    return true;
  });
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

describe('startGrpcServer: ShouldRateLimit', () => {
  const h = new Harness();
  let client: ReturnType<typeof rlsClient>;
  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    await h.start();
    client = rlsClient(h.server.port);
  });
  after(async () => {
    client.close();
    await h.server.close(1000);
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, []);
  });

  it('listens on a free port and decodes every request field as protobufjs sends it', async () => {
    assert.ok(h.server.port > 0);
    const request: RateLimitRequest = {
      domain: 'édge ☂ 𝄞',
      hitsAddend: 4_294_967_295,
      descriptors: [
        { entries: [{ key: 'remote_address', value: '2001:db8::1' }] },
        {
          entries: [
            { key: 'path', value: '/über/𝄞' },
            { key: 'method', value: 'GET' },
          ],
          limit: { requestsPerUnit: 4_294_967_295, unit: 4 },
          hitsAddend: 0,
        },
        { entries: [{ key: 'k', value: 'v' }], hitsAddend: 5 },
        { entries: [], hitsAddend: Number.MAX_SAFE_INTEGER },
      ],
    };
    const answer = await call(client, 'ShouldRateLimit', protoRequest(request));
    assert.deepEqual(h.requests.at(-1), request);
    assert.deepEqual(fromProtoResponse(answer as object), RESPONSE);
    assert.deepEqual(h.reports.at(-1), [5, 'over_limit']);
  });

  it('decodes an empty request', async () => {
    h.decide = async () => ({
      overallCode: 1,
      statuses: [],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
    });
    const answer = await call(client, 'ShouldRateLimit', {});
    assert.deepEqual(h.requests.at(-1), { domain: '', descriptors: [], hitsAddend: 0 });
    assert.deepEqual(fromProtoResponse(answer as object).overallCode, 1);
    assert.deepEqual(h.reports.at(-1), [5, 'ok']);
  });

  it('skips fields it does not know', async () => {
    const extended = extendedClient(h.server.port);
    await call(extended, 'ShouldRateLimit', {
      domain: 'd',
      extraInt64: -1,
      extraMessage: { note: 'later' },
      descriptors: [{ entries: [{ key: 'k', value: 'v', extraFixed64: 9 }], extraSint64: -3 }],
    });
    extended.close();
    assert.deepEqual(h.requests.at(-1), {
      domain: 'd',
      hitsAddend: 0,
      descriptors: [{ entries: [{ key: 'k', value: 'v' }] }],
    });
  });

  it('answers truncated or malformed bytes INVALID_ARGUMENT, without asking for a decision', async () => {
    const raw = rawClient(h.server.port);
    const asked = h.requests.length;
    await refusedWith(
      call(raw, 'ShouldRateLimit', Buffer.from([0x0a, 0x05, 0x61])),
      Status.INVALID_ARGUMENT,
      /cut short/,
    );
    await refusedWith(
      call(raw, 'ShouldRateLimit', Buffer.from([0x0f])),
      Status.INVALID_ARGUMENT,
      /wire type 7/,
    );
    raw.close();
    assert.equal(h.requests.length, asked);
    assert.deepEqual(h.reports.at(-1), [5, 'invalid']);
  });

  it('answers a decision refused as an argument error INVALID_ARGUMENT, with its message', async () => {
    h.decide = async () => {
      throw argumentError('a descriptor needs at least one entry');
    };
    await refusedWith(call(client, 'ShouldRateLimit', {}), Status.INVALID_ARGUMENT, /at least one entry/);
    assert.deepEqual(h.reports.at(-1), [5, 'invalid']);
  });

  it('answers any other failure UNAVAILABLE, synchronous or not, and reports it', async () => {
    const failures: (() => Promise<RateLimitResponse>)[] = [
      async () => {
        throw storeError('Redis is down');
      },
      () => {
        throw new Error('secret host 10.1.2.3');
      },
      () => Promise.reject('not even an Error'),
      // A response the codec cannot encode fails as the decision would.
      async () => ({}) as RateLimitResponse,
    ];
    for (const failure of failures) {
      h.errors.length = 0;
      h.decide = failure;
      await refusedWith(call(client, 'ShouldRateLimit', {}), Status.UNAVAILABLE);
      assert.equal(h.errors.length, 1);
      assert.deepEqual(h.reports.at(-1), [5, 'error']);
    }
    h.decide = async () => {
      throw storeError('Redis is down');
    };
    await refusedWith(call(client, 'ShouldRateLimit', {}), Status.UNAVAILABLE, /Redis is down/);
    h.decide = async () => {
      throw new Error('secret host 10.1.2.3');
    };
    await refusedWith(
      call(client, 'ShouldRateLimit', {}),
      Status.UNAVAILABLE,
      /^(?!.*secret).*could not decide/,
    );
  });
});

describe('startGrpcServer: limits and failing callbacks', () => {
  it('answers a request over maxMessageBytes INVALID_ARGUMENT, counts it invalid, and goes on serving', async () => {
    const h = await new Harness().start({ maxMessageBytes: 1024 });
    const client = rlsClient(h.server.port);
    const big = { domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'x'.repeat(2000) }] }] };
    await refusedWith(
      call(client, 'ShouldRateLimit', big),
      Status.INVALID_ARGUMENT,
      /larger than 1024 bytes/,
    );
    assert.deepEqual(h.reports, [[5, 'invalid']]);
    assert.equal(h.requests.length, 0);
    await call(client, 'ShouldRateLimit', { domain: 'd' });
    assert.equal(h.requests.length, 1);
    client.close();
    await h.server.close(1000);
  });

  it('survives an onRequest that throws, reporting it to onError', async () => {
    process.on('unhandledRejection', onUnhandled);
    const h = await new Harness().start({
      onRequest: () => {
        throw new Error('metrics broke');
      },
    });
    const client = rlsClient(h.server.port);
    await call(client, 'ShouldRateLimit', {});
    await call(client, 'ShouldRateLimit', {});
    assert.deepEqual(
      h.errors.map((e) => (e as Error).message),
      ['metrics broke', 'metrics broke'],
    );
    client.close();
    await h.server.close(1000);
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, []);
  });

  it('checks its options at start, naming the one at fault', async () => {
    const base = { host: '127.0.0.1', port: 0, shouldRateLimit: async () => RESPONSE, serving: () => true };
    const cases: [Record<string, unknown>, string][] = [
      [{ port: 70000 }, 'port'],
      [{ port: -1 }, 'port'],
      [{ host: '' }, 'host'],
      [{ shouldRateLimit: undefined }, 'shouldRateLimit'],
      [{ serving: 'yes' }, 'serving'],
      [{ maxMessageBytes: 0 }, 'maxMessageBytes'],
      [{ maxMessageBytes: 2 ** 31 }, 'maxMessageBytes'],
      [{ healthPollMs: 0 }, 'healthPollMs'],
      [{ onRequest: 1 }, 'onRequest'],
      [{ maxMessageByte: 10 }, 'maxMessageByte'],
    ];
    for (const [change, option] of cases) {
      await assert.rejects(startGrpcServer({ ...base, ...change } as GrpcServerOptions), {
        code: 'ERR_TOLLGATE_CONFIG',
        option,
      });
    }
  });

  it('refuses a port already taken with a configuration error', async () => {
    const h = await new Harness().start();
    await assert.rejects(new Harness().start({ port: h.server.port }), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'port',
      message: /cannot listen on 127\.0\.0\.1:\d+/,
    });
    await h.server.close(1000);
  });
});

describe('startGrpcServer: health and shutdown', () => {
  it('answers Check SERVING or NOT_SERVING for the server and the RLS service (both names), NOT_FOUND for others', async () => {
    const h = await new Harness().start();
    const health = healthClient(h.server.port);
    assert.deepEqual(await call(health, 'Check', { service: '' }), { status: 1 });
    assert.deepEqual(await call(health, 'Check', { service: RLS }), { status: 1 });
    // The name envoyproxy/ratelimit answers for, which probes written for it ask about.
    assert.deepEqual(await call(health, 'Check', { service: 'ratelimit' }), { status: 1 });
    await refusedWith(
      call(health, 'Check', { service: 'other.Service' }),
      Status.NOT_FOUND,
      /other\.Service/,
    );
    h.serving = false;
    assert.deepEqual(await call(health, 'Check', { service: '' }), { status: 2 });
    assert.deepEqual(await call(health, 'Check', { service: 'ratelimit' }), { status: 2 });
    health.close();
    await h.server.close(1000);
  });

  it('takes a serving() that throws as NOT_SERVING', async () => {
    const h = await new Harness().start({
      serving: () => {
        throw new Error('no idea');
      },
    });
    const health = healthClient(h.server.port);
    assert.deepEqual(await call(health, 'Check', {}), { status: 2 });
    health.close();
    await h.server.close(1000);
  });

  it('streams Watch: the status now, each change, SERVICE_UNKNOWN for others, NOT_SERVING and the end at close', async () => {
    const h = await new Harness().start({ healthPollMs: 5 });
    const health = healthClient(h.server.port);
    const statuses: number[] = [];
    const stream = health.Watch({ service: RLS });
    const ended = new Promise<void>((resolve) => stream.on('end', resolve));
    const next = () => new Promise<void>((resolve) => stream.once('data', () => resolve()));
    stream.on('data', (message: { status?: number }) => statuses.push(message.status ?? 0));
    await next();
    assert.deepEqual(statuses, [1]);
    h.serving = false;
    await next();
    h.serving = true;
    await next();
    assert.deepEqual(statuses, [1, 2, 1]);

    const unknown = health.Watch({ service: 'other.Service' });
    assert.deepEqual(await new Promise((resolve) => unknown.once('data', resolve)), { status: 3 });
    unknown.on('error', () => {});
    unknown.cancel();

    // Closing ends the watch at once: the grace is not spent waiting for it.
    await h.server.close(60_000);
    await ended;
    assert.deepEqual(statuses, [1, 2, 1, 2]);
    health.close();
  });

  it('gives calls in flight the grace, then cuts them', async () => {
    const h = new Harness();
    let release!: () => void;
    const started = new Promise<void>((resolve) => {
      h.decide = () => {
        resolve();
        return new Promise((done) => {
          release = () => done(RESPONSE);
        });
      };
    });
    await h.start();
    const client = rlsClient(h.server.port);
    const inFlight = call(client, 'ShouldRateLimit', {});
    await started;
    const closed = h.server.close(60_000);
    assert.equal(h.server.close(0), closed);
    release();
    await inFlight;
    await closed;

    const stuck = await new Harness().start();
    stuck.decide = () => new Promise(() => {});
    const client2 = rlsClient(stuck.server.port);
    const hanging = call(client2, 'ShouldRateLimit', {});
    while (stuck.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await stuck.server.close(10);
    // Cut: the client sees its stream reset or its connection gone, as grpc-js reports either.
    await assert.rejects(hanging, (error) =>
      [Status.CANCELLED, Status.UNAVAILABLE].includes(grpcError(error).code),
    );
    client.close();
    client2.close();
  });
});
