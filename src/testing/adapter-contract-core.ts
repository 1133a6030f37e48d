// The adapter contract's core: what a rejection answers, and whom a request is counted for.
import assert from 'node:assert/strict';
import { mock } from 'node:test';
import type { Decision } from '../decision/decision.js';
import { CAPACITY, fixture, rateLimitFields, unitsLeft } from './adapter-contract-fixtures.js';
import {
  type AdapterCase,
  type ContractOptions,
  connectionClosed,
  registerCases,
  request,
  resetWhileHeld,
  type WithApp,
  within,
} from './adapter-contract-http.js';

/** The bucket every request without an identity shares. */
const UNKNOWN = 'unknown';
/** Every value an identifier can return to say it cannot name the client. */
const NO_IDENTITIES = ['', undefined, null, false] as const;

const CORE: Record<string, AdapterCase> = {
  'allows N requests, then answers 429 with the JSON body and Retry-After; refills with time': async (
    withApp,
  ) => {
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
  },

  "counts the client's address by default": async (withApp) => {
    const { limiter, logger } = fixture();
    await withApp({ limiter, logger }, async (app) => {
      await request(app);
      await request(app);
      assert.equal(await unitsLeft(limiter), CAPACITY - 2);
    });
  },

  'spends a per-request cost': async (withApp) => {
    const { limiter, expected, logger } = fixture();
    await withApp({ limiter, logger, cost: async () => 2 }, async (app) => {
      const first = await request(app);
      assert.equal(first.status, 200);
      assert.deepEqual(rateLimitFields(first.headers), await expected('draft-6', 2));
      const second = await request(app);
      assert.equal(second.status, 429);
      assert.deepEqual(rateLimitFields(second.headers), await expected('draft-6', 2));
    });
  },

  'answers a custom statusCode and message': async (withApp) => {
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
  },

  'lets a custom handler answer, after the headers are set': async (withApp) => {
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
  },

  'lets skipped requests through uncounted and without headers': async (withApp) => {
    const { limiter, logger } = fixture();
    await withApp({ limiter, logger, skip: async () => true }, async (app) => {
      for (let i = 0; i <= CAPACITY; i++) {
        const answer = await request(app);
        assert.equal(answer.status, 200);
        assert.deepEqual(rateLimitFields(answer.headers), {});
      }
      assert.equal(await unitsLeft(limiter), CAPACITY);
    });
  },

  'lets skipped requests through uncounted, even without an identity': async (withApp) => {
    const { limiter, logger } = fixture();
    await withApp({ limiter, logger, skip: () => true, identifier: () => undefined }, async (app) => {
      for (let i = 0; i <= CAPACITY; i++) assert.equal((await request(app)).status, 200);
      assert.equal(await unitsLeft(limiter, UNKNOWN), CAPACITY);
    });
  },

  [`counts every request without an identity ('', undefined, null, false) in one bucket, "${UNKNOWN}"`]:
    async (withApp) => {
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
    },

  "with unidentified: 'reject' answers a request without an identity 400 JSON, counting nothing": async (
    withApp,
  ) => {
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
  },

  'limits clients that reset the connection before the limiter runs (no address) in one shared bucket':
    async (withApp) => {
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
    },
};

export function coreContract(withApp: WithApp): void {
  registerCases(CORE, withApp);
}
