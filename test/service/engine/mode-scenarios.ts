// The decision engine's modes on a store: shadow, replaces, check-only, quota, headers, measures and reloads.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Code, Unit } from '../../../src/service/protocol/messages.js';
import { engineKit, headersOf, type StoreMaker } from './engine-harness.js';
import { descriptor, limitRule, stubConfig } from './stub-config.js';

export function modeScenarios(makeStore: StoreMaker): void {
  const { open, ask } = engineKit(makeStore);

  it('counts a shadow-mode limit and reports its denial as OK, never making the request OVER_LIMIT', async () => {
    const { decider, observer, close } = await open();
    const config = stubConfig('domain', {
      's=1': limitRule('s1', { requestsPerUnit: 1, unit: Unit.MINUTE, shadowMode: true }),
    });
    try {
      assert.equal((await ask(decider, config, descriptor('s=1'))).statuses[0]?.limitRemaining, 0);
      const over = await ask(decider, config, descriptor('s=1'));
      assert.equal(over.overallCode, Code.OK);
      assert.equal(over.statuses[0]?.code, Code.OK);
      assert.equal(over.statuses[0]?.limitRemaining, 0);
      assert.equal(over.statuses[0]?.currentLimit?.requestsPerUnit, 1);
      assert.equal(headersOf(over)['Retry-After'], undefined);
      assert.deepEqual(observer.outcomes.at(-1), {
        statsKey: 'domain.s1',
        hits: 1,
        level: 'over',
        shadow: true,
        fromRequest: false,
      });
    } finally {
      await close();
    }
  });

  it('lifts a limit another matched limit replaces: OK, no current limit, uncounted', async () => {
    const { decider, close } = await open();
    const config = stubConfig('domain', {
      'a=1': limitRule('ra1', { requestsPerUnit: 1, unit: Unit.MINUTE, name: 'a' }),
      'b=1': limitRule('rb1', { requestsPerUnit: 5, unit: Unit.MINUTE, replaces: ['a'] }),
      'u=1': limitRule('ru1', { requestsPerUnit: 0, unit: Unit.UNKNOWN, unlimited: true, replaces: ['a'] }),
    });
    try {
      for (let i = 0; i < 2; i++) {
        const both = await ask(decider, config, descriptor('a=1'), descriptor('b=1'));
        assert.equal(both.overallCode, Code.OK);
        assert.deepEqual(both.statuses[0], { code: Code.OK, limitRemaining: 0 });
        assert.equal(both.statuses[1]?.limitRemaining, 4 - i);
      }
      const byUnlimited = await ask(decider, config, descriptor('a=1'), descriptor('u=1'));
      assert.deepEqual(byUnlimited.statuses[0], { code: Code.OK, limitRemaining: 0 });
      const alone = await ask(decider, config, descriptor('a=1'));
      assert.equal(alone.statuses[0]?.currentLimit?.name, 'a');
      assert.equal(
        alone.statuses[0]?.limitRemaining,
        0,
        'its first hit: the replaced requests were not counted',
      );
    } finally {
      await close();
    }
  });

  it('checks without counting when a descriptor adds 0 hits: OVER_LIMIT once no further hit can pass', async () => {
    const { decider, observer, close } = await open();
    const config = stubConfig('domain', {
      'c=1': limitRule('c1', { requestsPerUnit: 2, unit: Unit.MINUTE }),
    });
    try {
      const check = () => ask(decider, config, descriptor('c=1', 0));
      for (let i = 0; i < 3; i++) {
        const response = await check();
        assert.equal(response.overallCode, Code.OK);
        assert.equal(response.statuses[0]?.limitRemaining, 2, 'nothing counted');
      }
      await ask(decider, config, descriptor('c=1'));
      assert.equal((await check()).statuses[0]?.limitRemaining, 1);
      assert.deepEqual(observer.outcomes.at(-1), {
        statsKey: 'domain.c1',
        hits: 0,
        level: 'within',
        shadow: false,
        fromRequest: false,
      });
      await ask(decider, config, descriptor('c=1'));
      const full = await check();
      assert.equal(full.overallCode, Code.OVER_LIMIT);
      assert.equal(full.statuses[0]?.limitRemaining, 0);
      assert.equal(headersOf(full)['Retry-After'], '58');
    } finally {
      await close();
    }
  });

  it('makes a request OVER_LIMIT on quota-mode limits only when every one of them is over', async () => {
    const { decider, close } = await open();
    const quota = (key: string, requestsPerUnit: number) =>
      limitRule(key, { requestsPerUnit, unit: Unit.MINUTE, quotaMode: true });
    const config = stubConfig('domain', {
      'q=1': quota('q1', 1),
      'q=2': quota('q2', 1),
      'q=3': quota('q3', 5),
    });
    try {
      assert.equal((await ask(decider, config, descriptor('q=1'), descriptor('q=2'))).overallCode, Code.OK);
      const oneLeft = await ask(decider, config, descriptor('q=1'), descriptor('q=3'));
      assert.equal(oneLeft.overallCode, Code.OK, 'q=3 still has quota');
      assert.deepEqual(
        oneLeft.statuses.map((s) => s.code),
        [Code.OVER_LIMIT, Code.OK],
      );
      const allOver = await ask(decider, config, descriptor('q=1'), descriptor('q=2'));
      assert.equal(allOver.overallCode, Code.OVER_LIMIT);
      assert.equal(headersOf(allOver)['Retry-After'], '58');
    } finally {
      await close();
    }
  });

  it("carries the most restrictive descriptor's RateLimit fields, and the domain's raw body when over", async () => {
    const { decider, close } = await open();
    const body = new TextEncoder().encode('slow down');
    const config = stubConfig(
      'domain',
      {
        'wide=1': limitRule('wide1', { requestsPerUnit: 10, unit: Unit.MINUTE }),
        'narrow=1': limitRule('narrow1', { requestsPerUnit: 2, unit: Unit.MINUTE }),
      },
      body,
    );
    try {
      const first = await ask(decider, config, descriptor('wide=1'), descriptor('narrow=1'));
      assert.deepEqual(headersOf(first), {
        'RateLimit-Policy': '"aligned-window";q=2;w=60',
        RateLimit: '"aligned-window";r=1;t=58',
      });
      assert.equal(first.rawBody, undefined);
      await ask(decider, config, descriptor('narrow=1'));
      const over = await ask(decider, config, descriptor('wide=1'), descriptor('narrow=1'));
      assert.deepEqual(headersOf(over), {
        'RateLimit-Policy': '"aligned-window";q=2;w=60',
        RateLimit: '"aligned-window";r=0;t=58',
        'Retry-After': '58',
      });
      assert.deepEqual(over.rawBody, body);
    } finally {
      await close();
    }
  });

  it('reports each counted descriptor, near past 80% of its limit', async () => {
    const { decider, observer, close } = await open();
    const config = stubConfig('domain', {
      'n=1': limitRule('n1', { requestsPerUnit: 10, unit: Unit.MINUTE }),
    });
    try {
      for (let i = 0; i < 11; i++) await ask(decider, config, descriptor('n=1'));
      assert.deepEqual(
        observer.outcomes.map((o) => o.level),
        [...Array(8).fill('within'), 'near', 'near', 'over'],
      );
      assert.equal(observer.storeErrors, 0);
    } finally {
      await close();
    }
  });

  it('keeps counting across a reload: new rule objects with the same scope share the counts', async () => {
    const { decider, close } = await open();
    const rule = () => limitRule('r1', { requestsPerUnit: 3, unit: Unit.MINUTE });
    try {
      await ask(decider, stubConfig('domain', { 'r=1': rule() }), descriptor('r=1'));
      const reloaded = await ask(decider, stubConfig('domain', { 'r=1': rule() }), descriptor('r=1'));
      assert.equal(reloaded.statuses[0]?.limitRemaining, 1);
    } finally {
      await close();
    }
  });
}
