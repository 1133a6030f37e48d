// The decision engine counting on a store: to the limit and over, hits, several descriptors, unknown, unlimited, ban.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Code, Unit } from '../../../src/service/protocol/messages.js';
import { engineKit, headersOf, type StoreMaker, T0 } from './engine-harness.js';
import { descriptor, limitRule, stubConfig } from './stub-config.js';

export function countingScenarios(makeStore: StoreMaker): void {
  const { clock, open, ask } = engineKit(makeStore);

  it('counts to the limit, answers OVER_LIMIT with nothing left until the window turns', async () => {
    const { decider, close } = await open();
    const config = stubConfig('domain', {
      'k=v': limitRule('k_v', { requestsPerUnit: 3, unit: Unit.MINUTE, name: 'three' }),
    });
    try {
      for (const remaining of [2, 1, 0]) {
        const response = await ask(decider, config, descriptor('k=v'));
        assert.equal(response.overallCode, Code.OK);
        assert.deepEqual(response.statuses, [
          {
            code: Code.OK,
            currentLimit: { name: 'three', requestsPerUnit: 3, unit: Unit.MINUTE },
            limitRemaining: remaining,
            durationUntilResetMs: 58_000,
          },
        ]);
        assert.equal(headersOf(response)['Retry-After'], undefined);
      }
      const over = await ask(decider, config, descriptor('k=v'));
      assert.equal(over.overallCode, Code.OVER_LIMIT);
      assert.equal(over.statuses[0]?.code, Code.OVER_LIMIT);
      assert.equal(over.statuses[0]?.limitRemaining, 0);
      assert.equal(over.statuses[0]?.durationUntilResetMs, 58_000);
      assert.equal(headersOf(over)['Retry-After'], '58');
      clock.now = T0 + 60_000;
      const next = await ask(decider, config, descriptor('k=v'));
      assert.equal(next.overallCode, Code.OK);
      assert.equal(next.statuses[0]?.limitRemaining, 2);
      assert.equal(next.statuses[0]?.durationUntilResetMs, 60_000);
    } finally {
      await close();
    }
  });

  it("adds the request's hits, a descriptor's own first; more hits than remain are refused uncounted", async () => {
    const { decider, close } = await open();
    const config = stubConfig('domain', {
      'h=1': limitRule('h1', { requestsPerUnit: 10, unit: Unit.MINUTE }),
    });
    const request = (hitsAddend: number, own?: number) =>
      decider.shouldRateLimit(config, {
        domain: 'domain',
        descriptors: [descriptor('h=1', own)],
        hitsAddend,
      });
    try {
      assert.equal((await request(3)).statuses[0]?.limitRemaining, 7);
      assert.equal((await request(5, 2)).statuses[0]?.limitRemaining, 5);
      assert.equal((await request(0)).statuses[0]?.limitRemaining, 4, 'an unset request hits_addend is 1');
      const over = await request(5);
      assert.equal(over.overallCode, Code.OVER_LIMIT);
      assert.equal((await request(4)).statuses[0]?.limitRemaining, 0, 'the refused 5 were not counted');
    } finally {
      await close();
    }
  });

  it('counts each descriptor on its own: one over its limit leaves the others counted', async () => {
    const { decider, close } = await open();
    const config = stubConfig('domain', {
      'a=1': limitRule('a1', { requestsPerUnit: 1, unit: Unit.MINUTE }),
      'b=1': limitRule('b1', { requestsPerUnit: 5, unit: Unit.HOUR }),
    });
    try {
      const first = await ask(decider, config, descriptor('a=1'), descriptor('b=1'));
      assert.equal(first.overallCode, Code.OK);
      assert.deepEqual(
        first.statuses.map((s) => s.limitRemaining),
        [0, 4],
      );
      const second = await ask(decider, config, descriptor('a=1'), descriptor('b=1'));
      assert.equal(second.overallCode, Code.OVER_LIMIT);
      assert.deepEqual(
        second.statuses.map((s) => [s.code, s.limitRemaining, s.durationUntilResetMs]),
        [
          [Code.OVER_LIMIT, 0, 58_000],
          [Code.OK, 3, 3_598_000],
        ],
      );
    } finally {
      await close();
    }
  });

  it('answers OK, with no limit, for an unknown domain or descriptor', async () => {
    const { decider, observer, close } = await open();
    const config = stubConfig('domain', {
      'k=v': limitRule('k_v', { requestsPerUnit: 1, unit: Unit.MINUTE }),
    });
    try {
      const unknownDomain = await decider.shouldRateLimit(config, {
        domain: 'other',
        descriptors: [descriptor('k=v'), descriptor('x=y')],
        hitsAddend: 1,
      });
      assert.deepEqual(unknownDomain, {
        overallCode: Code.OK,
        statuses: [
          { code: Code.OK, limitRemaining: 0 },
          { code: Code.OK, limitRemaining: 0 },
        ],
        responseHeadersToAdd: [],
        requestHeadersToAdd: [],
      });
      const mixed = await ask(decider, config, descriptor('x=y'), descriptor('k=v'));
      assert.deepEqual(mixed.statuses[0], { code: Code.OK, limitRemaining: 0 });
      assert.equal(mixed.statuses[1]?.limitRemaining, 0);
      assert.equal(observer.outcomes.length, 1, 'only the limited descriptor is measured');
    } finally {
      await close();
    }
  });

  it('answers an unlimited descriptor OK with the greatest remaining, uncounted and unmeasured', async () => {
    const { decider, observer, close } = await open();
    const config = stubConfig('domain', {
      'u=1': limitRule('u1', { requestsPerUnit: 0, unit: Unit.UNKNOWN, unlimited: true }),
    });
    try {
      for (let i = 0; i < 3; i++) {
        const response = await ask(decider, config, descriptor('u=1'));
        assert.deepEqual(response.statuses, [{ code: Code.OK, limitRemaining: 4_294_967_295 }]);
        assert.deepEqual(response.responseHeadersToAdd, []);
      }
      assert.equal(observer.outcomes.length, 0);
    } finally {
      await close();
    }
  });

  it('refuses every hit of a limit of 0 (a ban), with no Retry-After, as waiting cures nothing', async () => {
    const { decider, close } = await open();
    const config = stubConfig('domain', {
      'ban=1': limitRule('ban1', { requestsPerUnit: 0, unit: Unit.HOUR }),
    });
    try {
      const response = await ask(decider, config, descriptor('ban=1'));
      assert.equal(response.overallCode, Code.OVER_LIMIT);
      assert.equal(response.statuses[0]?.limitRemaining, 0);
      assert.equal(
        response.statuses[0]?.durationUntilResetMs,
        3_598_000,
        'until the end of the hour, as the reference',
      );
      assert.equal(headersOf(response)['Retry-After'], undefined);
    } finally {
      await close();
    }
  });
}
