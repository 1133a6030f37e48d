// Options people bring from other rate limiters are refused at wire-up with what says the same here, on every adapter.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { rateLimit as express } from '../../src/adapters/express/express.js';
import { rateLimit as fastify } from '../../src/adapters/fastify/fastify.js';
import { rateLimit as hono } from '../../src/adapters/hono/hono.js';
import { rateLimit as koa } from '../../src/adapters/koa/koa.js';
import { rateLimit as node } from '../../src/adapters/node/node.js';
import { pointed, withoutPointer } from '../harness/error-pointer.js';

const factories: [string, (options: object) => unknown][] = [
  ['Hono', (options) => hono(options as never)],
  ['Koa', (options) => koa(options as never)],
  ['node:http', (options) => node(options as never)],
];

/** The refusal, its message in its own words (up to the pointer every message ends with). */
function refusal(build: () => unknown): { message: string } {
  try {
    build();
  } catch (error) {
    assert.equal((error as { code?: string }).code, 'ERR_TOLLGATE_CONFIG');
    return { message: withoutPointer(error) };
  }
  return assert.fail('expected a refusal');
}

describe("other rate limiters' options", () => {
  for (const [name, build] of factories) {
    it(`${name}: express-rate-limit's and @fastify/rate-limit's keys say what to write instead`, () => {
      assert.equal(
        refusal(() => build({ windowMs: 60_000, limit: 5 })).message,
        '`windowMs` is not an option of rateLimit (a fixed window is `policy: fixedWindow({ limit, windowMs })`)',
      );
      assert.equal(
        refusal(() => build({ timeWindow: '1 minute' })).message,
        '`timeWindow` is not an option of rateLimit (a fixed window is `policy: fixedWindow({ limit: max, windowMs: timeWindow })`)',
      );
      assert.equal(
        refusal(() => build({ keyGenerater: () => 'a' })).message,
        '`keyGenerater` is not an option of rateLimit; did you mean `keyGenerator`? (the client is `identifier: (req) => string`)',
      );
    });
  }

  it('Fastify: @fastify/rate-limit keys fail the registration with the same advice', async () => {
    const app = Fastify();
    await assert.rejects(
      async () => {
        await app.register(fastify, { max: 100, timeWindow: 60_000 } as never);
      },
      {
        code: 'ERR_TOLLGATE_CONFIG',
        option: 'max',
        message: pointed(
          '`max` is not an option of rateLimit (a fixed window is `policy: fixedWindow({ limit, windowMs })`)',
        ),
      },
    );
  });

  it("Express: express-rate-limit's keys, and a typo of one, name tollgate/express-rate-limit", () => {
    const drop = "import rateLimit from 'tollgate/express-rate-limit'";
    for (const key of [
      'windowMs',
      'limit',
      'max',
      'standardHeaders',
      'keyGenerator',
      'ipv6Subnet',
      'validate',
    ]) {
      const { message } = refusal(() => express({ [key]: 1 } as never));
      assert.ok(
        message.startsWith(`\`${key}\` is not an option of rateLimit (an express-rate-limit option`),
        message,
      );
      assert.ok(message.includes(drop), message);
    }
    const { message } = refusal(() => express({ windowMS: 60_000 } as never));
    assert.ok(
      message.startsWith('`windowMS` is not an option of rateLimit; did you mean `windowMs`?'),
      message,
    );
    assert.ok(message.includes(drop), message);
  });
});
