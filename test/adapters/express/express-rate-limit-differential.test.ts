// express-rate-limit 8 and Tollgate's rateLimit in its style, side by side: the option sets of its documentation, the
// same requests on the same mocked clock over loopback HTTP, and the same answers request by request (status,
// rate-limit headers, Retry-After, body, and the request's figures), window rollovers included.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestHandler } from 'express';
import { ipKeyGenerator as erlKeys, rateLimit as erlRateLimit } from 'express-rate-limit';
import { ipKeyGenerator, rateLimit } from '../../../src/adapters/express/express.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { CASES, MINUTE, times } from './express-rate-limit-cases.js';
import { runSequence } from './express-rate-limit-harness.js';

describe('express-rate-limit and Tollgate in its style answer alike', () => {
  for (const { name, options, steps, property, injectedClock } of CASES) {
    it(name, async (t) => {
      // express-rate-limit reports its validations (and limit 0) on the console.
      t.mock.method(console, 'warn', () => undefined);
      t.mock.method(console, 'error', () => undefined);
      const theirs = await runSequence(
        () => erlRateLimit(options({ ipKeyGenerator: erlKeys })) as RequestHandler,
        steps,
        property,
      );
      const ours = await runSequence(
        () => {
          const store = injectedClock
            ? { store: new MemoryStore({ clock: () => Date.now(), autoCleanup: false }) }
            : {};
          return rateLimit({ ...options({ ipKeyGenerator }), ...store });
        },
        steps,
        property,
      );
      assert.equal(ours.length, theirs.length);
      for (const [index, answer] of theirs.entries())
        assert.deepEqual(ours[index], answer, `answer ${index + 1}`);
    });
  }
});

describe('listed differences, each asserted', () => {
  it('both skip options at once: express-rate-limit counts only requests in flight; Tollgate refuses it at wire-up', async (t) => {
    t.mock.method(console, 'error', () => undefined);
    const both = { windowMs: MINUTE, limit: 1, skipFailedRequests: true, skipSuccessfulRequests: true };
    const theirs = await runSequence(() => erlRateLimit(both) as RequestHandler, times(3));
    assert.deepEqual(
      theirs.map(({ status }) => status),
      [200, 200, 200],
    );
    assert.throws(() => rateLimit(both), {
      code: 'ERR_TOLLGATE_CONFIG',
      option: 'skipSuccessfulRequests',
      message: /concurrency\(\)/,
    });
  });

  it('a draft-8 name outside A-Z a-z 0-9 . _ -: express-rate-limit writes it unescaped; Tollgate refuses it', async () => {
    const named = { windowMs: MINUTE, limit: 1, standardHeaders: 'draft-8', identifier: 'my "api"' } as const;
    const [theirs] = await runSequence(() => erlRateLimit(named) as RequestHandler, [{}]);
    assert.equal(theirs?.headers.ratelimit, '"my "api""; r=0; t=60');
    assert.throws(() => rateLimit(named), { code: 'ERR_TOLLGATE_CONFIG', option: 'identifier' });
  });

  it('a limit function giving a fraction: express-rate-limit compares with it; Tollgate hands Express an error', async (t) => {
    t.mock.method(console, 'error', () => undefined);
    const fractional = { windowMs: MINUTE, limit: () => 1.5 };
    const theirs = await runSequence(() => erlRateLimit(fractional) as RequestHandler, times(2));
    const ours = await runSequence(() => rateLimit(fractional), times(2));
    assert.deepEqual(
      theirs.map(({ status }) => status),
      [200, 429],
    );
    assert.deepEqual(
      ours.map(({ status }) => status),
      [500, 500],
    );
  });
});
