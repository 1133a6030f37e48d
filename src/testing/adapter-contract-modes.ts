// The adapter contract's failure modes and headers: errors answered 500, a store out of reach, shadow mode, and
// every header style.
import assert from 'node:assert/strict';
import type { Limiter } from '../limiter/limiter.js';
import { degradedResponse, type Store } from '../stores/store.js';
import { CAPACITY, fixture, rateLimitFields, T0, unitsLeft } from './adapter-contract-fixtures.js';
import {
  type AdapterCase,
  CLIENT,
  type ContractOptions,
  registerCases,
  request,
  type WithApp,
} from './adapter-contract-http.js';
import { parseList } from './structured-list.js';

const FAILURE = 'Internal Server Error';

function throwing(): never {
  throw new Error('boom');
}

/** What fails, and the app options that make it fail. */
const FAILURES: Record<string, (limiter: Limiter) => ContractOptions> = {
  'a throwing identifier': (limiter) => ({ limiter, identifier: throwing }),
  'a rejecting identifier': (limiter) => ({ limiter, identifier: async () => throwing() }),
  'a throwing skip': (limiter) => ({ limiter, skip: throwing }),
  'a throwing cost': (limiter) => ({ limiter, cost: throwing }),
  'a throwing store': () => ({ store: { evaluate: throwing, reset: () => {} } satisfies Store }),
};

/** A failure of `options`' making: answered 500 JSON without rate-limit headers, and logged once. */
function failureCase(options: (limiter: Limiter) => ContractOptions): AdapterCase {
  return async (withApp) => {
    const { limiter, logger } = fixture();
    await withApp({ ...options(limiter), logger }, async (app) => {
      const answer = await request(app);
      assert.equal(answer.status, 500);
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal((answer.body as { error?: unknown }).error, FAILURE);
      assert.deepEqual(rateLimitFields(answer.headers), {});
      assert.equal(logger.error.mock.callCount(), 1);
    });
  };
}

/** A store that is never reachable: it answers with the limiter's fail mode, as a real one would. */
const unreachable: Store = {
  evaluate: (storeRequest) =>
    degradedResponse(storeRequest.policies, storeRequest.failOpen ?? true, 1000, T0),
  reset: () => {},
};

const MODES: Record<string, AdapterCase> = {
  'fails closed: 429 with Retry-After and no quota headers while the store is unreachable': async (
    withApp,
  ) => {
    const { logger } = fixture();
    await withApp({ store: unreachable, failOpen: false, logger }, async (app) => {
      const answer = await request(app);
      assert.equal(answer.status, 429);
      assert.deepEqual(rateLimitFields(answer.headers), { 'retry-after': '1' });
    });
  },

  'fails open: lets requests through while the store is unreachable': async (withApp) => {
    const { logger } = fixture();
    await withApp({ store: unreachable, failOpen: true, logger }, async (app) => {
      for (let i = 0; i <= CAPACITY; i++) {
        const answer = await request(app);
        assert.equal(answer.status, 200);
        assert.deepEqual(rateLimitFields(answer.headers), {});
      }
    });
  },

  'in shadow mode never rejects, but still counts and reports (without a Retry-After it would not honour)':
    async (withApp) => {
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
    },

  'sends no rate-limit headers with headers: false, even on a 429': async (withApp) => {
    const { limiter, logger } = fixture();
    await withApp({ limiter, logger, headers: false }, async (app) => {
      for (let i = 0; i <= CAPACITY; i++) {
        const answer = await request(app);
        assert.equal(answer.status, i < CAPACITY ? 200 : 429);
        assert.deepEqual(rateLimitFields(answer.headers), {});
      }
    });
  },

  "sends draft-7, and draft-8 with the client's partition key, and the legacy set alone in epoch seconds":
    async (withApp) => {
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
    },

  "sends draft-10 RateLimit-Policy and RateLimit as valid Structured Fields with headers: 'draft-10'": async (
    withApp,
  ) => {
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
  },
};

export function modesContract(withApp: WithApp): void {
  registerCases(
    Object.fromEntries(
      Object.entries(FAILURES).map(([what, options]) => [
        `turns ${what} into a logged 500 JSON answer`,
        failureCase(options),
      ]),
    ),
    withApp,
  );
  registerCases(MODES, withApp);
}
