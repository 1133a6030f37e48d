// The adapter contract's core: rejections, identities, failures, fail modes, shadow mode and headers.
import assert from 'node:assert/strict';
import { it, mock } from 'node:test';
import { parseList } from 'structured-headers';
import type { Decision } from '../../src/decision/decision.js';
import type { Limiter } from '../../src/limiter/limiter.js';
import { degradedResponse, type Store } from '../../src/stores/store.js';
import { CAPACITY, fixture, rateLimitFields, T0, unitsLeft } from './adapter-contract-fixtures.js';
import {
  CLIENT,
  type ContractOptions,
  connectionClosed,
  request,
  resetWhileHeld,
  type WithApp,
  within,
} from './adapter-contract-http.js';

const FAILURE = 'Internal Server Error';

function throwing(): never {
  throw new Error('boom');
}

/** The bucket every request without an identity shares. */
const UNKNOWN = 'unknown';
/** Every value an identifier can return to say it cannot name the client. */
const NO_IDENTITIES = ['', undefined, null, false] as const;

export function coreContract(withApp: WithApp): void {
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

  it("sends draft-7, and draft-8 with the client's partition key, and the legacy set alone in epoch seconds", async () => {
    const cases = [
      [{ headers: 'draft-7' }, 'draft-7', {}],
      [{ headers: 'draft-8', legacyHeaders: true }, 'draft-8', { legacyHeaders: true, key: CLIENT }],
      [
        { headers: false, legacyHeaders: true, legacyReset: 'epoch-seconds' },
        false,
        { legacyHeaders: true, legacyReset: 'epoch-seconds' },
      ],
    ] as const;
    for (const [options, style, expectedOptions] of cases) {
      const { limiter, expected, logger } = fixture();
      await withApp({ limiter, logger, ...options }, async (app) => {
        for (let i = 0; i <= CAPACITY; i++) {
          const answer = await request(app);
          assert.equal(answer.status, i < CAPACITY ? 200 : 429);
          assert.deepEqual(rateLimitFields(answer.headers), await expected(style, 1, expectedOptions));
        }
      });
    }
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
}
