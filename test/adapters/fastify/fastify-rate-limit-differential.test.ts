// The drop-in against @fastify/rate-limit itself, each on its default store: every answer and callback alike.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { build, SCENARIOS } from './fastify-rate-limit-cases.js';
import { pair } from './fastify-rate-limit-harness.js';

describe('tollgate/fastify-rate-limit answers as @fastify/rate-limit does (default stores)', () => {
  for (const scenario of SCENARIOS)
    it(scenario.name, async (t) => {
      const both = await pair(t, build(scenario));
      const answers = await both.run(scenario.steps);
      // Each scenario reaches a limit, so the comparison covers the rejections too.
      assert.ok(answers.some((answer) => answer.status >= 400) || scenario.name.includes('createRateLimit'));
    });
});
