// tollgate/express-rate-limit at wire-up: it throws where express-rate-limit throws, and otherwise reports the same
// checks (code by code, once) and goes on limiting; `validate` switches them as there.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request } from 'express';
import * as erl from 'express-rate-limit';
import * as ours from '../../../src/adapters/express/express-rate-limit/index.js';
import { quiet } from './express-rate-limit-harness.js';

const OPTION_SETS: Record<string, Record<string, unknown>> = {
  'no options': {},
  'windowMs 0': { windowMs: 0 },
  'windowMs above a timer': { windowMs: 2 ** 32 },
  'windowMs a string': { windowMs: '15m' },
  'limit 0': { limit: 0 },
  'max 0': { max: 0 },
  "standardHeaders 'draft-9'": { standardHeaders: 'draft-9' },
  'ipv6Subnet 48.5': { ipv6Subnet: 48.5 },
  'ipv6Subnet 16': { ipv6Subnet: 16 },
  'ipv6Subnet 100': { ipv6Subnet: 100 },
  'ipv6Subnet false': { ipv6Subnet: false },
  'headers false': { headers: false },
  'validate a string': { validate: 'yes' },
  'validate an unknown check': { validate: { noSuchCheck: true } },
  'validate false': { validate: false, windowMS: 1, ipv6Subnet: 16 },
  'an unknown option': { windowMS: 1000 },
  'retired options': { draft_polli_ratelimit_headers: true, onLimitReached: () => undefined },
  'express-slow-down options': { delayAfter: 1, delayMs: 100 },
  'a keyGenerator reading req.ip alone': { keyGenerator: (req: Request) => req.ip ?? '' },
  'a keyGenerator with ipv6Subnet': { keyGenerator: () => 'k', ipv6Subnet: 56 },
  'a store without increment': { store: { decrement: () => undefined, resetKey: () => undefined } },
  'a logger without warn': { logger: { error: () => undefined } },
  'a logger that is a function': { logger: () => undefined },
};

/** What building a limiter did: thrown (its type), or the codes it logged at wire-up. */
function wireUp(build: (options: object) => unknown, options: Record<string, unknown>): unknown {
  const logger = quiet();
  try {
    build({ logger, ...options });
  } catch (error) {
    return { thrown: (error as Error).constructor.name };
  }
  const codes = (calls: { arguments: unknown[] }[]) =>
    calls.map((call) => (call.arguments[0] as { code?: string }).code ?? call.arguments[1]);
  return { warned: codes(logger.warn.mock.calls), errors: codes(logger.error.mock.calls) };
}

describe('tollgate/express-rate-limit at wire-up, beside express-rate-limit', () => {
  for (const [name, options] of Object.entries(OPTION_SETS))
    it(name, () => {
      assert.deepEqual(wireUp(ours.rateLimit, options), wireUp(erl.rateLimit, options));
    });

  it('its exports are express-rate-limit 8s, plus tollgateStore', () => {
    const names = (module: object) => Object.keys(module).sort();
    assert.deepEqual(
      names(ours).filter((name) => name !== 'tollgateStore'),
      names(erl),
    );
    assert.equal(ours.default, ours.rateLimit);
    assert.deepEqual(
      [ours.SECOND, ours.MINUTE, ours.HOUR, ours.DAY],
      [erl.SECOND, erl.MINUTE, erl.HOUR, erl.DAY],
    );
  });
});
