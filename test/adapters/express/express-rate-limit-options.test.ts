// express-rate-limit's style at wire-up: which keys switch to it, what is refused and what to write instead, and
// what is warned of.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request } from 'express';
import { rateLimit } from '../../../src/adapters/express/express.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { withoutPointer } from '../../harness/error-pointer.js';
import { quiet, serve, store } from './express-rate-limit-harness.js';

/** Asserts a configuration error for `option` whose own words (up to the pointer every message ends with) match `message`. */
function refuses(options: object, option: string, message: RegExp): void {
  assert.throws(
    () => rateLimit(options as never),
    (error: { code?: string; option?: string }) => {
      assert.deepEqual([error.code, error.option], ['ERR_TOLLGATE_CONFIG', option]);
      assert.match(withoutPointer(error), message);
      return true;
    },
  );
}

describe("express-rate-limit's style: which keys switch to it", () => {
  it('any key only express-rate-limit has; Tollgate-only and shared keys keep Tollgate meaning', async () => {
    const native = await serve(rateLimit({ requestsPerMinute: 2, legacyHeaders: false, store: store() }));
    try {
      const { headers } = await native.get();
      assert.equal(headers.get('ratelimit-limit'), '2');
      assert.equal(headers.get('x-ratelimit-limit'), null);
    } finally {
      await native.close();
    }
    for (const key of ['windowMs', 'limit', 'max', 'standardHeaders', 'requestPropertyName', 'validate']) {
      const value = {
        windowMs: 1000,
        limit: 1,
        max: 1,
        standardHeaders: false,
        requestPropertyName: 'x',
        validate: true,
      }[key];
      const erl = await serve(rateLimit({ [key]: value, store: store() } as never));
      try {
        // express-rate-limit's defaults: the X-RateLimit set, no standard fields.
        const { headers } = await erl.get();
        assert.ok(headers.get('x-ratelimit-reset')?.match(/^\d+$/), key);
        assert.equal(headers.get('ratelimit-limit'), null, key);
      } finally {
        await erl.close();
      }
    }
  });

  it("refuses Tollgate's own options beside express-rate-limit's, naming both", () => {
    refuses(
      { windowMs: 1000, policy: {} },
      'policy',
      /`policy` is Tollgate's own, and `windowMs` is express-rate-limit's/,
    );
    refuses({ limit: 5, requestsPerMinute: 5 }, 'requestsPerMinute', /`limit` is express-rate-limit's/);
    refuses({ limit: 5, headers: false }, 'headers', /`legacyHeaders`.*`standardHeaders`/);
    refuses({ limit: 5, failOpen: true }, 'failOpen', /`passOnStoreError`/);
    // Its style keeps its own rule for a client that leaves: given back under skipFailedRequests.
    refuses(
      { limit: 5, skipFailedRequests: true, abortedRequestsFail: false },
      'abortedRequestsFail',
      /`abortedRequestsFail` is Tollgate's own/,
    );
    refuses({ limit: 5, onDecision: 'metrics' }, 'onDecision', /must be a function/);
  });

  it('refuses what it cannot honour, with what to use instead', () => {
    const erlStore = { increment: () => undefined, decrement: () => undefined, resetKey: () => undefined };
    refuses(
      { windowMs: 1000, store: erlStore },
      'store',
      /RedisStore\(\{ client \}\) from 'tollgate\/redis'/,
    );
    refuses({ windowMs: 1000, onLimitReached: () => {} }, 'onLimitReached', /`handler`/);
    refuses(
      { draft_polli_ratelimit_headers: true },
      'draft_polli_ratelimit_headers',
      /standardHeaders: 'draft-6'/,
    );
    refuses({ delayAfter: 1, delayMs: 500 }, 'delayAfter', /express-slow-down's/);
    refuses({ keyGenerator: () => 'k', ipv6Subnet: 48 }, 'ipv6Subnet', /ipKeyGenerator\(req\.ip, subnet\)/);
    refuses(
      { limit: 1, skipFailedRequests: true, skipSuccessfulRequests: true },
      'skipSuccessfulRequests',
      /concurrency\(\)/,
    );
  });

  it('names a bad value, and suggests the option a typo meant', () => {
    refuses({ limit: 5, windowMS: 1000 }, 'windowMS', /did you mean `windowMs`\?$/);
    refuses({ windowMs: 1000, keyGenrator: () => 'k' }, 'keyGenrator', /did you mean `keyGenerator`\?$/);
    refuses({ requestsPerMinut: 5 }, 'requestsPerMinut', /did you mean `requestsPerMinute`\?$/);
    refuses(
      { limit: 5, validate: { xForwardedForHeadr: false } },
      'xForwardedForHeadr',
      /did you mean `xForwardedForHeader`\?$/,
    );
    refuses({ limit: 5, validate: { trustProxy: 'no' } }, 'validate.trustProxy', /must be a boolean/);
    refuses({ windowMs: -1 }, 'windowMs', /positive whole number/);
    refuses({ limit: 1.5 }, 'limit', /non-negative integer/);
    refuses({ max: -1 }, 'max', /non-negative integer/);
    refuses({ limit: '5' }, 'limit', /a number or a function/);
    refuses({ limit: 5, standardHeaders: 'draft-10' }, 'standardHeaders', /"draft-8"/);
    refuses({ limit: 5, legacyHeaders: 'yes' }, 'legacyHeaders', /boolean/);
    refuses({ limit: 5, statusCode: 200 }, 'statusCode', /400-599/);
    refuses({ limit: 5, requestPropertyName: '' }, 'requestPropertyName', /non-empty string/);
    refuses({ limit: 5, ipv6Subnet: 129 }, 'ipv6Subnet', /1 to 128, or false/);
    refuses({ limit: 5, retryAfter: -1 }, 'retryAfter', /non-negative integer/);
    refuses({ limit: 5, passOnStoreError: 'yes' }, 'passOnStoreError', /boolean/);
    refuses({ limit: 5, standardHeaders: 'draft-8', identifier: 'my api' }, 'identifier', /A-Z, a-z, 0-9/);
  });

  it('a store shared by two such limiters needs a scope on each, or their counts would mix', () => {
    const shared = store();
    rateLimit({ windowMs: 1000, limit: 1, store: shared });
    refuses({ windowMs: 1000, limit: 2, store: shared }, 'scope', /give each limiter its own `scope`/);
    rateLimit({ windowMs: 1000, limit: 2, store: shared, scope: 'login' });
    // A limiter the store itself refuses (a window past its retention cap) leaves it free for the next.
    const capped = new MemoryStore({ autoCleanup: false, inactiveAfterMs: '1m' });
    assert.throws(() => rateLimit({ windowMs: 120_000, store: capped }), { code: 'ERR_TOLLGATE_CONFIG' });
    rateLimit({ windowMs: 30_000, store: capped });
  });

  it('refuses a limit above what its hit counter holds, and a windowMs that holds no hit, naming the bound', () => {
    // The counter's quota times its window stays below 2^51: 868749 hits in 30 days.
    refuses({ windowMs: '30d', limit: 1_000_000 }, 'limit', /must be at most 868749 with this `windowMs`/);
    refuses({ windowMs: 30 * 86_400_000, max: 868_750 }, 'max', /at most 868749.*below 2\^51/);
    rateLimit({ windowMs: '30d', limit: 868_749 });
    refuses({ windowMs: 2 ** 52 }, 'windowMs', /must be below 2\^51 ms/);
    refuses({ windowMs: 2 ** 51, limit: 0 }, 'windowMs', /must be below 2\^51 ms/);
  });

  it('warns once at wire-up that `identifier` is no client key, unless draft-8 headers name the policy by it', async () => {
    const cases = [
      [{ windowMs: 1000, identifier: (req: Request) => req.ip ?? '' }, 1],
      [{ limit: 5, standardHeaders: 'draft-7', identifier: 'api' }, 1],
      [{ limit: 5, standardHeaders: 'draft-8', identifier: 'api' }, 0],
      [{ limit: 5, standardHeaders: 'draft-8' }, 0],
      [{ limit: 5 }, 0],
    ] as const;
    for (const [options, warnings] of cases) {
      const logger = quiet();
      const app = await serve(rateLimit({ ...options, logger, store: store() }));
      try {
        for (let i = 0; i < 2; i++) assert.equal((await app.get()).status, 200);
      } finally {
        await app.close();
      }
      assert.equal(logger.warn.mock.callCount(), warnings, JSON.stringify(options));
      if (warnings > 0)
        assert.match(
          String(logger.warn.mock.calls[0]?.arguments[0]),
          /in express-rate-limit's style `identifier` names the policy in draft-8 headers; the client key is `keyGenerator`/,
        );
    }
  });
});
