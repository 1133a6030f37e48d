// The one contract every adapter passes over real HTTP: same answers, same headers, same failure modes.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { describe, it, mock } from 'node:test';
import { parseList } from 'structured-headers';
import type { Decision } from '../../src/decision.js';
import type { GateOptions } from '../../src/gate.js';
import type { HeaderStyle } from '../../src/headers.js';
import { rateLimitHeaders } from '../../src/headers.js';
import { createLimiter, type Limiter } from '../../src/limiter.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { degradedResponse, type Store } from '../../src/stores/store.js';

export interface ContractApp {
  /** Base URL of an app that answers `GET /` with 200 JSON behind the limiter. */
  readonly url: string;
  close(): Promise<void>;
}

/** A framework-free rejection answer; each binding turns it into its framework's `handler`. */
export interface ContractAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** What the route behind the limiter does for one request; each binding acts it out its framework's way. */
export interface RoutePlan {
  /** The answer's status. Default 200. */
  readonly status?: number;
  /** Set as the response's `x-verdict` header, for `requestWasSuccessful` to read from the framework's response. */
  readonly verdict?: string;
  /** Awaited before answering (a slow handler); with `stream`, between the first chunk and the last. */
  readonly hold?: Promise<void>;
  /** Answer text/plain in two chunks, `STREAMED[0]` at once and `STREAMED[1]` after `hold`. */
  readonly stream?: boolean;
  /** Throw after `hold` instead of answering: the framework's error handling answers 500. */
  readonly throws?: boolean;
}

/** The chunks of a streamed answer. */
export const STREAMED = ['first\n', 'last\n'] as const;

/** A streamed answer's chunks, as a generator for frameworks that send a Readable. */
export async function* streamedChunks(plan: RoutePlan): AsyncGenerator<string> {
  yield STREAMED[0];
  await plan.hold;
  yield STREAMED[1];
}

export interface ContractOptions extends Omit<GateOptions<unknown>, 'requestWasSuccessful'> {
  readonly handler?: (decision: Decision) => ContractAnswer;
  /** Awaited by an async step of the app's own that runs before the limiter, given the node:http request. */
  readonly beforeLimit?: (req: IncomingMessage) => Promise<void>;
  /** Called each time the route behind the limiter runs: what it does this time. Default: 200 JSON at once. */
  readonly route?: () => RoutePlan;
  /** The adapter's `requestWasSuccessful`, given the `x-verdict` header the binding reads from its response. */
  readonly requestWasSuccessful?: (verdict: string | undefined) => boolean | Promise<boolean>;
}

export type MakeApp = (options: ContractOptions) => Promise<ContractApp>;

/** Every request comes from here, so this is what each adapter's default identifier must resolve. */
export const CLIENT = '127.0.0.1';
const T0 = Date.UTC(2030, 0, 1);
const CAPACITY = 3;
const FAILURE = 'Internal Server Error';

/** Listens on an ephemeral loopback port; `close` also drops fetch's keep-alive sockets so the process exits. */
export async function listen(server: Server): Promise<ContractApp> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

/** One bounded request: a hung adapter fails its test instead of stalling the run. */
export async function request(app: ContractApp, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${app.url}/`, { headers, signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json');
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text };
}

/** The response's rate-limit fields, lower-cased, for exact comparison with what the core computes. */
function rateLimitFields(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => /ratelimit|retry-after/i.test(name)));
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** Units `identity` has left: a peek at cost 0 reads the balance without asking for a unit. */
export async function unitsLeft(limiter: Limiter, identity = CLIENT): Promise<number> {
  return (await limiter.peek(identity, { cost: 0 })).remaining;
}

export function silentLogger() {
  return { warn: mock.fn(), error: mock.fn() };
}

/**
 * A fixed clock, the limiter an app runs on, and a twin limiter on its own store fed the same requests: the
 * twin's decisions say which headers the app must send. Advance `now` to refill without sleeping.
 */
function fixture() {
  const clock = { now: T0 };
  const policy = tokenBucket({ capacity: CAPACITY, refillPerSecond: 1 });
  const store = () => new MemoryStore({ clock: () => clock.now, autoCleanup: false });
  const limiter = createLimiter({ policy, store: store() });
  const twin = createLimiter({ policy, store: store() });
  const expected = async (style: HeaderStyle = 'draft-6', cost = 1) =>
    lowerCased(rateLimitHeaders(await twin.consume(CLIENT, { cost }), style));
  return { clock, limiter, expected, logger: silentLogger() };
}

function throwing(): never {
  throw new Error('boom');
}

/** The bucket every request without an identity shares. */
const UNKNOWN = 'unknown';
/** Every value an identifier can return to say it cannot name the client. */
const NO_IDENTITIES = ['', undefined, null, false] as const;

/** Rejects with `what` if `promise` has not settled within `ms`, so a wait that never ends fails its test. */
async function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what()}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A client that sends a whole request, waits until the app holds it in a step before the limiter (`held`), then
 * resets the connection (RST): by the time the limiter runs, the server's socket is destroyed and has no address.
 */
async function resetWhileHeld(app: ContractApp, held: Promise<void>): Promise<void> {
  const { hostname, port } = new URL(app.url);
  const socket: Socket = connect(Number(port), hostname);
  try {
    await within(once(socket, 'connect'), 5000, () => 'connecting');
    socket.write(`GET / HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
    await within(held, 5000, () => 'the app never reached the step before the limiter');
  } finally {
    socket.resetAndDestroy();
  }
}

/** Resolves once the request's connection is gone (the server saw the reset; its ECONNRESET is the server's). */
function connectionClosed(req: IncomingMessage): Promise<void> {
  if (req.socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => req.socket.once('close', () => resolve()));
}

export function runAdapterContract(name: string, makeApp: MakeApp): void {
  const withApp = async (options: ContractOptions, run: (app: ContractApp) => Promise<void>) => {
    const app = await makeApp(options);
    try {
      await run(app);
    } finally {
      await app.close();
    }
  };

  describe(`adapter contract: ${name}`, () => {
    it('allows N requests, then answers 429 with the JSON body and Retry-After; refills with time', async () => {
      const { clock, limiter, expected, logger } = fixture();
      await withApp({ limiter, logger }, async (app) => {
        for (let i = 0; i < CAPACITY; i++) {
          const answer = await request(app);
          assert.equal(answer.status, 200);
          assert.deepEqual(rateLimitFields(answer.headers), await expected());
        }
        const denied = await request(app);
        assert.equal(denied.status, 429);
        assert.match(denied.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(denied.body, {
          error: 'Too Many Requests',
          message: 'Too many requests, please try again later.',
        });
        assert.equal(denied.headers.get('retry-after'), '1');
        assert.deepEqual(rateLimitFields(denied.headers), await expected());
        clock.now += 1000;
        assert.equal((await request(app)).status, 200);
      });
    });

    it("counts the client's address by default", async () => {
      const { limiter, logger } = fixture();
      await withApp({ limiter, logger }, async (app) => {
        await request(app);
        await request(app);
        assert.equal(await unitsLeft(limiter), CAPACITY - 2);
      });
    });

    it('spends a per-request cost', async () => {
      const { limiter, expected, logger } = fixture();
      await withApp({ limiter, logger, cost: async () => 2 }, async (app) => {
        const first = await request(app);
        assert.equal(first.status, 200);
        assert.deepEqual(rateLimitFields(first.headers), await expected('draft-6', 2));
        const second = await request(app);
        assert.equal(second.status, 429);
        assert.deepEqual(rateLimitFields(second.headers), await expected('draft-6', 2));
      });
    });

    it('answers a custom statusCode and message', async () => {
      const { limiter, logger } = fixture();
      await withApp({ limiter, logger, statusCode: 503, message: 'slow down' }, async (app) => {
        for (let i = 0; i < CAPACITY; i++) await request(app);
        const denied = await request(app);
        assert.equal(denied.status, 503);
        assert.deepEqual(denied.body, { error: 'Too Many Requests', message: 'slow down' });
      });
      const other = fixture();
      await withApp({ limiter: other.limiter, logger, message: { code: 'SLOW_DOWN' } }, async (app) => {
        for (let i = 0; i < CAPACITY; i++) await request(app);
        assert.deepEqual((await request(app)).body, { code: 'SLOW_DOWN' });
      });
    });

    it('lets a custom handler answer, after the headers are set', async () => {
      const { limiter, expected, logger } = fixture();
      const handler = (decision: Decision) => ({
        status: 418,
        body: { limited: true, retryAfterMs: decision.retryAfterMs },
      });
      await withApp({ limiter, logger, handler }, async (app) => {
        for (let i = 0; i < CAPACITY; i++) {
          await expected();
          assert.equal((await request(app)).status, 200);
        }
        const denied = await request(app);
        assert.equal(denied.status, 418);
        assert.deepEqual(denied.body, { limited: true, retryAfterMs: 1000 });
        assert.deepEqual(rateLimitFields(denied.headers), await expected());
      });
    });

    it('lets skipped requests through uncounted and without headers', async () => {
      const { limiter, logger } = fixture();
      await withApp({ limiter, logger, skip: async () => true }, async (app) => {
        for (let i = 0; i <= CAPACITY; i++) {
          const answer = await request(app);
          assert.equal(answer.status, 200);
          assert.deepEqual(rateLimitFields(answer.headers), {});
        }
        assert.equal(await unitsLeft(limiter), CAPACITY);
      });
    });

    it('lets skipped requests through uncounted, even without an identity', async () => {
      const { limiter, logger } = fixture();
      await withApp({ limiter, logger, skip: () => true, identifier: () => undefined }, async (app) => {
        for (let i = 0; i <= CAPACITY; i++) assert.equal((await request(app)).status, 200);
        assert.equal(await unitsLeft(limiter, UNKNOWN), CAPACITY);
      });
    });

    it(`counts every request without an identity ('', undefined, null, false) in one bucket, "${UNKNOWN}"`, async () => {
      const { limiter, logger } = fixture();
      let next = 0;
      const identifier = () => NO_IDENTITIES[next++ % NO_IDENTITIES.length];
      await withApp({ limiter, logger, identifier }, async (app) => {
        const statuses = [];
        for (let i = 0; i < NO_IDENTITIES.length * 2; i++) statuses.push((await request(app)).status);
        const expected = statuses.map((_, i) => (i < CAPACITY ? 200 : 429));
        assert.deepEqual(statuses, expected);
        assert.equal(await unitsLeft(limiter, UNKNOWN), 0);
        assert.equal(await unitsLeft(limiter), CAPACITY);
      });
    });

    it("with unidentified: 'reject' answers a request without an identity 400 JSON, counting nothing", async () => {
      for (const identity of NO_IDENTITIES) {
        const { limiter, logger } = fixture();
        const decisions = mock.fn();
        const options = { limiter, logger, unidentified: 'reject', onDecision: decisions } as const;
        await withApp({ ...options, identifier: () => identity }, async (app) => {
          for (let i = 0; i <= CAPACITY; i++) {
            const answer = await request(app);
            assert.equal(answer.status, 400, `identity ${String(identity)}`);
            assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
            assert.equal((answer.body as { error?: unknown }).error, 'Bad Request');
            assert.deepEqual(rateLimitFields(answer.headers), {});
          }
          assert.equal(await unitsLeft(limiter, UNKNOWN), CAPACITY);
          assert.equal(decisions.mock.callCount(), 0);
          assert.equal(logger.error.mock.callCount(), 0);
        });
      }
    });

    it('limits clients that reset the connection before the limiter runs (no address) in one shared bucket', async () => {
      const { limiter, logger } = fixture();
      const attempts = 20;
      let served = 0;
      let denied = 0;
      let arrived = () => {};
      let settled = () => {};
      const allSettled = new Promise<void>((resolve) => {
        settled = () => served + denied === attempts && resolve();
      });
      const options: ContractOptions = {
        limiter,
        logger,
        // The app holds each request until the server has seen its connection reset, then lets it go on.
        beforeLimit: (req) => {
          arrived();
          return connectionClosed(req);
        },
        route: () => {
          served++;
          settled();
          return {};
        },
        onDecision: (event) => {
          if (event.decision.allowed) return;
          denied++;
          settled();
        },
      };
      await withApp(options, async (app) => {
        for (let i = 0; i < attempts; i++)
          await resetWhileHeld(app, new Promise((resolve) => (arrived = resolve)));
        await within(allSettled, 5000, () => `${served} served and ${denied} denied of ${attempts}`);
        assert.equal(served, CAPACITY);
        assert.equal(await unitsLeft(limiter, UNKNOWN), 0);
      });
    });

    const failures: Record<string, (limiter: Limiter) => ContractOptions> = {
      'a throwing identifier': (limiter) => ({ limiter, identifier: throwing }),
      'a rejecting identifier': (limiter) => ({ limiter, identifier: async () => throwing() }),
      'a throwing skip': (limiter) => ({ limiter, skip: throwing }),
      'a throwing cost': (limiter) => ({ limiter, cost: throwing }),
      'a throwing store': () => ({ store: { evaluate: throwing, reset: () => {} } satisfies Store }),
    };
    for (const [what, options] of Object.entries(failures)) {
      it(`turns ${what} into a logged 500 JSON answer`, async () => {
        const { limiter, logger } = fixture();
        await withApp({ ...options(limiter), logger }, async (app) => {
          const answer = await request(app);
          assert.equal(answer.status, 500);
          assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
          assert.equal((answer.body as { error?: unknown }).error, FAILURE);
          assert.deepEqual(rateLimitFields(answer.headers), {});
          assert.equal(logger.error.mock.callCount(), 1);
        });
      });
    }

    /** A store that is never reachable: it answers with the limiter's fail mode, as a real one would. */
    const unreachable: Store = {
      evaluate: (storeRequest) =>
        degradedResponse(storeRequest.policies, storeRequest.failOpen ?? true, 1000, T0),
      reset: () => {},
    };

    it('fails closed: 429 with Retry-After and no quota headers while the store is unreachable', async () => {
      const { logger } = fixture();
      await withApp({ store: unreachable, failOpen: false, logger }, async (app) => {
        const answer = await request(app);
        assert.equal(answer.status, 429);
        assert.deepEqual(rateLimitFields(answer.headers), { 'retry-after': '1' });
      });
    });

    it('fails open: lets requests through while the store is unreachable', async () => {
      const { logger } = fixture();
      await withApp({ store: unreachable, failOpen: true, logger }, async (app) => {
        for (let i = 0; i <= CAPACITY; i++) {
          const answer = await request(app);
          assert.equal(answer.status, 200);
          assert.deepEqual(rateLimitFields(answer.headers), {});
        }
      });
    });

    it('in shadow mode never rejects, but still counts and reports (without a Retry-After it would not honour)', async () => {
      const { limiter, expected, logger } = fixture();
      await withApp({ limiter, logger, shadow: true }, async (app) => {
        for (let i = 0; i < CAPACITY + 2; i++) {
          const answer = await request(app);
          assert.equal(answer.status, 200);
          const { 'retry-after': _, ...fields } = await expected();
          assert.deepEqual(rateLimitFields(answer.headers), fields);
        }
        assert.equal(await unitsLeft(limiter), 0);
      });
    });

    it('sends no rate-limit headers with headers: false, even on a 429', async () => {
      const { limiter, logger } = fixture();
      await withApp({ limiter, logger, headers: false }, async (app) => {
        for (let i = 0; i <= CAPACITY; i++) {
          const answer = await request(app);
          assert.equal(answer.status, i < CAPACITY ? 200 : 429);
          assert.deepEqual(rateLimitFields(answer.headers), {});
        }
      });
    });

    it("sends draft-10 RateLimit-Policy and RateLimit as valid Structured Fields with headers: 'draft-10'", async () => {
      const { limiter, expected, logger } = fixture();
      await withApp({ limiter, logger, headers: 'draft-10' }, async (app) => {
        for (let i = 0; i <= CAPACITY; i++) {
          const answer = await request(app);
          const fields = rateLimitFields(answer.headers);
          assert.deepEqual(fields, await expected('draft-10'));
          const [policy] = parseList(fields['ratelimit-policy'] ?? '');
          const [state] = parseList(fields.ratelimit ?? '');
          assert.deepEqual(policy?.[0], 'token-bucket');
          assert.equal(policy?.[1].get('q'), CAPACITY);
          assert.deepEqual(state?.[0], 'token-bucket');
          assert.equal(state?.[1].get('r'), Math.max(0, CAPACITY - i - 1));
        }
      });
    });
  });
}
