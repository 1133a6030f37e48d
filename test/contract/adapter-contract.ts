// The one contract every adapter passes over real HTTP: same answers, same headers, same failure modes.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { describe, it, mock } from 'node:test';
import { parseList } from 'structured-headers';
import type { Decision } from '../../src/decision.js';
import type { DecisionEvent, GateOptions } from '../../src/gate.js';
import type { HeaderStyle } from '../../src/headers.js';
import { rateLimitHeaders } from '../../src/headers.js';
import { createLimiter, type Limiter } from '../../src/limiter.js';
import { concurrency } from '../../src/policies/concurrency.js';
import type { AnyPolicy } from '../../src/policies/policy.js';
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
 * A client that sends a whole request, waits until the app holds it (`held`), and with `seen` until that much of
 * the response arrived, then resets the connection (RST). Held before the limiter, the server's socket is
 * destroyed by the time the limiter runs, and has no address; held in the route, the client left mid-response.
 */
async function resetWhileHeld(app: ContractApp, held: Promise<void>, seen?: string): Promise<void> {
  const { hostname, port } = new URL(app.url);
  const socket: Socket = connect(Number(port), hostname);
  let received = '';
  const arrived = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      if (seen !== undefined && received.includes(seen)) resolve();
    });
  });
  try {
    await within(once(socket, 'connect'), 5000, () => 'connecting');
    socket.write(`GET / HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
    await within(held, 5000, () => 'the app never held the request');
    if (seen !== undefined) await within(arrived, 5000, () => `${JSON.stringify(seen)} never arrived`);
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

    describe('concurrency limits', () => concurrencyContract(withApp));
    describe('refunds and lockouts', () => refundContract(withApp));
  });
}

type WithApp = (options: ContractOptions, run: (app: ContractApp) => Promise<void>) => Promise<void>;

/** Re-checks the conditions tests wait for each time something they count changes. */
class Watch {
  readonly #checks = new Set<() => void>();

  changed(): void {
    for (const check of [...this.#checks]) check();
  }

  /** Resolves once `condition` holds; fails the test, saying `what`, if it has not within 5 s. */
  until(condition: () => boolean, what: string): Promise<void> {
    const met = new Promise<void>((resolve) => {
      const check = () => {
        if (!condition()) return;
        this.#checks.delete(check);
        resolve();
      };
      this.#checks.add(check);
      check();
    });
    return within(met, 5000, () => what);
  }
}

/** A MemoryStore on `clock` that counts what it applied: releases (refunds naming a lease) and refunds of units. */
function recordingStore(clock: { now: number }, watch: Watch) {
  const memory = new MemoryStore({ clock: () => clock.now, autoCleanup: false });
  const counts = { releases: 0, refunds: 0 };
  const store: Store = {
    evaluate: (storeRequest) => {
      const answer = memory.evaluate(storeRequest);
      if (storeRequest.action === 'refund') {
        if (storeRequest.lease === '') counts.refunds++;
        else counts.releases++;
        watch.changed();
      }
      return answer;
    },
    reset: (keys) => memory.reset(keys),
  };
  return { store, counts };
}

/** A route plan whose `held` requests wait in the route until `letGo`. */
type Answering = Omit<RoutePlan, 'hold'> & { readonly held?: boolean };

/**
 * A limiter on a recording store, and a route that counts the requests it serves, how many it holds at once
 * (`inRoute`, `peak`), and the denials the gate reports. `answer` sets what the route does from now on.
 */
function shaping(policy: AnyPolicy | readonly AnyPolicy[]) {
  const clock = { now: T0 };
  const watch = new Watch();
  const { store, counts } = recordingStore(clock, watch);
  const limiter = createLimiter({ policy, store });
  const traffic = { served: 0, denied: 0, inRoute: 0, peak: 0 };
  let answering: Answering = {};
  let letGo = () => {};
  let hold = new Promise<void>((resolve) => (letGo = resolve));
  const route = (): RoutePlan => {
    traffic.served++;
    const { held = false, ...plan } = answering;
    if (held) traffic.inRoute++;
    traffic.peak = Math.max(traffic.peak, traffic.inRoute);
    watch.changed();
    if (!held) return plan;
    return { ...plan, hold: hold.then(() => void traffic.inRoute--) };
  };
  const onDecision = (event: DecisionEvent) => {
    if (event.decision.allowed) return;
    traffic.denied++;
    watch.changed();
  };
  const logger = silentLogger();
  return {
    clock,
    store,
    counts,
    limiter,
    traffic,
    logger,
    /** The route, the logger and the denials' count, for an app that builds its own limiter. */
    observing: { logger, route, onDecision },
    options: (more: ContractOptions = {}): ContractOptions => ({
      limiter,
      logger,
      route,
      onDecision,
      ...more,
    }),
    answer: (plan: Answering) => {
      answering = plan;
    },
    /** Lets every held request go on; requests held after this wait for the next call. */
    letGo: () => {
      letGo();
      hold = new Promise<void>((resolve) => (letGo = resolve));
    },
    until: (condition: () => boolean, what: string) => watch.until(condition, what),
  };
}

/** Lets what closing an app started (the last responses' close events, their releases and refunds) run out. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Reads a streamed answer's first chunk, leaving the rest to `rest`. */
async function streaming(app: ContractApp): Promise<{ status: number; rest: () => Promise<string> }> {
  const response = await fetch(`${app.url}/`, { signal: AbortSignal.timeout(5000) });
  const reader = response.body?.getReader();
  assert.ok(reader, 'a streamed answer has a body');
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(STREAMED[0])) {
    const { done, value } = await reader.read();
    assert.ok(!done, `the stream ended before its first chunk: ${JSON.stringify(text)}`);
    text += decoder.decode(value, { stream: true });
  }
  const rest = async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      text += decoder.decode(chunk.value, { stream: true });
    return text;
  };
  return { status: response.status, rest };
}

function concurrencyContract(withApp: WithApp): void {
  const slots = (max: number) => shaping(concurrency({ max, leaseMs: '1m' }));

  it('with a concurrency limit of 1: 429 while a request is in flight, 200 once it finished; a 429 holds nothing', async () => {
    const fx = slots(1);
    await withApp(fx.options(), async (app) => {
      fx.answer({ held: true });
      const first = request(app);
      await fx.until(() => fx.traffic.inRoute === 1, 'the first request never reached the route');
      assert.equal((await request(app)).status, 429);
      fx.answer({});
      fx.letGo();
      assert.equal((await first).status, 200);
      await fx.until(() => fx.counts.releases === 1, 'the finished request never released its slot');
      assert.equal((await request(app)).status, 200);
    });
    await settle();
    // Both admissions released once each, though each response both finished and closed.
    assert.deepEqual(fx.counts, { releases: 2, refunds: 0 });
    assert.equal(await unitsLeft(fx.limiter), 1);
  });

  it('releases the slot when the client leaves before the response, while the handler still runs', async () => {
    const fx = slots(1);
    await withApp(fx.options(), async (app) => {
      fx.answer({ held: true });
      await resetWhileHeld(
        app,
        fx.until(() => fx.traffic.inRoute === 1, 'the route never held the request'),
      );
      await fx.until(() => fx.counts.releases === 1, 'the slot was not released when the client left');
      assert.equal(fx.traffic.inRoute, 1);
      fx.answer({});
      assert.equal((await request(app)).status, 200);
      fx.letGo();
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 2, refunds: 0 });
  });

  it('holds the slot while the response streams, and releases it after the last chunk', async () => {
    const fx = slots(1);
    await withApp(fx.options(), async (app) => {
      fx.answer({ held: true, stream: true });
      const first = await streaming(app);
      assert.equal(first.status, 200);
      assert.equal((await request(app)).status, 429);
      fx.answer({});
      fx.letGo();
      assert.equal(await first.rest(), STREAMED.join(''));
      await fx.until(() => fx.counts.releases === 1, 'the streamed request never released its slot');
      assert.equal((await request(app)).status, 200);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 2, refunds: 0 });
  });

  it('releases the slot when the client leaves mid-stream', async () => {
    const fx = slots(1);
    await withApp(fx.options(), async (app) => {
      fx.answer({ held: true, stream: true });
      const held = fx.until(() => fx.traffic.inRoute === 1, 'the route never held the request');
      await resetWhileHeld(app, held, STREAMED[0]);
      await fx.until(() => fx.counts.releases === 1, 'the slot was not released when the client left');
      assert.equal(fx.traffic.inRoute, 1);
      fx.letGo();
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 1, refunds: 0 });
  });

  it("releases the slot of a handler that throws, once the framework's 500 is sent", async () => {
    const fx = slots(1);
    await withApp(fx.options(), async (app) => {
      fx.answer({ throws: true });
      assert.equal((await request(app)).status, 500);
      await fx.until(() => fx.counts.releases === 1, 'the failed request never released its slot');
      fx.answer({});
      assert.equal((await request(app)).status, 200);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 2, refunds: 0 });
  });

  it('never has more than max requests in flight under N concurrent clients, and serves them all in turn', async () => {
    const max = 3;
    const clients = 10;
    const fx = slots(max);
    await withApp(fx.options(), async (app) => {
      fx.answer({ held: true });
      // Every waiting client asks at once; those admitted hold until all are answered, then the rest ask again.
      for (let waiting = clients; waiting > 0; ) {
        const { served, denied } = fx.traffic;
        const answers = Array.from({ length: waiting }, () => request(app));
        const asked = waiting;
        await fx.until(
          () => fx.traffic.served + fx.traffic.denied === served + denied + asked,
          `not every one of ${asked} clients was decided`,
        );
        const admitted = Math.min(max, waiting);
        assert.equal(fx.traffic.served - served, admitted);
        fx.letGo();
        const statuses = (await Promise.all(answers)).map((answer) => answer.status).sort();
        assert.deepEqual(statuses, [...Array(admitted).fill(200), ...Array(waiting - admitted).fill(429)]);
        await fx.until(() => fx.counts.releases === fx.traffic.served, 'the wave never released its slots');
        waiting -= admitted;
      }
    });
    assert.equal(fx.traffic.served, clients);
    assert.equal(fx.traffic.peak, max);
    assert.equal(await unitsLeft(fx.limiter), max);
  });
}

function refundContract(withApp: WithApp): void {
  const bucket = (capacity = CAPACITY) => shaping(tokenBucket({ capacity, refillPerSecond: 1 }));
  // Each side of the 400 boundary twice, in a bucket that holds them all: a refund still on its way after its
  // response arrived cannot turn the next request into a 429.
  const statuses: Answering[] = [{ status: 200 }, { status: 399 }, { status: 400 }, { status: 503 }];
  /** Requests one after the other, each answered with the next plan; checks the status each got. */
  const answerEach = async (fx: ReturnType<typeof bucket>, app: ContractApp, plans: readonly Answering[]) => {
    for (const plan of plans) {
      fx.answer(plan);
      assert.equal((await request(app)).status, plan.status ?? 200);
    }
  };

  it('skipFailedRequests refunds each response with status >= 400, once', async () => {
    const fx = bucket(statuses.length);
    await withApp(fx.options({ skipFailedRequests: true }), async (app) => {
      await answerEach(fx, app, statuses);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 0, refunds: 2 });
    assert.equal(await unitsLeft(fx.limiter), statuses.length - 2);
  });

  it('skipSuccessfulRequests refunds each response with status < 400, once', async () => {
    const fx = bucket(statuses.length);
    await withApp(fx.options({ skipSuccessfulRequests: true }), async (app) => {
      await answerEach(fx, app, statuses);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 0, refunds: 2 });
    assert.equal(await unitsLeft(fx.limiter), statuses.length - 2);
  });

  it('requestWasSuccessful decides instead of the status, from the response; what it throws is logged and failed', async () => {
    const fx = bucket();
    const verdicts: (string | undefined)[] = [];
    const requestWasSuccessful = async (verdict: string | undefined) => {
      verdicts.push(verdict);
      if (verdict === 'throw') throw new Error('verdict failed');
      return verdict === 'ok';
    };
    await withApp(fx.options({ skipFailedRequests: true, requestWasSuccessful }), async (app) => {
      await answerEach(fx, app, [
        { status: 200, verdict: 'bad' },
        { status: 500, verdict: 'ok' },
        { status: 200, verdict: 'throw' },
      ]);
    });
    await settle();
    assert.deepEqual(verdicts, ['bad', 'ok', 'throw']);
    assert.deepEqual(fx.counts, { releases: 0, refunds: 2 });
    assert.equal(await unitsLeft(fx.limiter), CAPACITY - 1);
    assert.equal(fx.logger.error.mock.callCount(), 1);
    const [error] = fx.logger.error.mock.calls[0]?.arguments ?? [];
    assert.ok(error instanceof Error && error.message === 'verdict failed');
  });

  it('a client that leaves before the response was sent counts as failed, without asking requestWasSuccessful', async () => {
    for (const skip of ['skipFailedRequests', 'skipSuccessfulRequests'] as const) {
      // A concurrency slot beside the bucket: its release tells when the server has seen the client leave.
      const fx = shaping([
        tokenBucket({ capacity: CAPACITY, refillPerSecond: 1 }),
        concurrency({ max: CAPACITY, leaseMs: '1m' }),
      ]);
      const requestWasSuccessful = mock.fn(() => true);
      await withApp(fx.options({ [skip]: true, requestWasSuccessful }), async (app) => {
        fx.answer({ held: true });
        await resetWhileHeld(
          app,
          fx.until(() => fx.traffic.inRoute === 1, 'the route never held the request'),
        );
        await fx.until(() => fx.counts.releases === 1, 'the server never saw the client leave');
        fx.letGo();
      });
      await settle();
      const refunds = skip === 'skipFailedRequests' ? 1 : 0;
      assert.deepEqual(fx.counts, { releases: 1, refunds }, skip);
      assert.equal(requestWasSuccessful.mock.callCount(), 0);
    }
  });

  it('never refunds a denial, nor one shadow mode let through', async () => {
    const fx = bucket();
    await withApp(
      fx.options({ skipFailedRequests: true, handler: () => ({ status: 503, body: {} }) }),
      async (app) => {
        await answerEach(fx, app, Array(CAPACITY).fill({}));
        assert.equal((await request(app)).status, 503);
      },
    );
    const shadow = bucket();
    await withApp(shadow.options({ skipFailedRequests: true, shadow: true, cost: CAPACITY }), async (app) => {
      await answerEach(shadow, app, [{}, { status: 500 }]);
    });
    await settle();
    assert.equal(fx.traffic.denied, 1);
    assert.equal(shadow.traffic.denied, 1);
    assert.deepEqual(
      [fx.counts, shadow.counts],
      [
        { releases: 0, refunds: 0 },
        { releases: 0, refunds: 0 },
      ],
    );
    assert.equal(await unitsLeft(shadow.limiter), 0);
  });

  it('locks a client out after failed logins: 429 with a Retry-After covering the block, then lets it in', async () => {
    const fx = bucket();
    const login: ContractOptions = {
      ...fx.observing,
      policy: tokenBucket({ capacity: CAPACITY, refillPerSecond: 1 }),
      store: fx.store,
      scope: 'login',
      blockMs: '15m',
      skipSuccessfulRequests: true,
      identifier: () => 'alice',
    };
    await withApp(login, async (app) => {
      // Successful logins are given back: any number of them never lock anyone out.
      for (let i = 1; i <= CAPACITY * 2; i++) {
        await answerEach(fx, app, [{}]);
        await fx.until(() => fx.counts.refunds === i, 'a successful login was not refunded');
      }
      await answerEach(fx, app, Array(CAPACITY).fill({ status: 401 }));
      const locked = await request(app);
      assert.equal(locked.status, 429);
      assert.equal(locked.headers.get('retry-after'), '900');
      fx.clock.now += 60_000;
      const still = await request(app);
      assert.equal(still.status, 429);
      assert.equal(still.headers.get('retry-after'), '840');
      fx.clock.now = T0 + 900_000;
      await answerEach(fx, app, [{}]);
    });
  });
}
