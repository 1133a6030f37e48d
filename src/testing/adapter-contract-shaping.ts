// The adapter contract's shaping part: concurrency slots held for a response's life, refunds, lockouts (for clients
// that leave first, adapter-contract-aborts.ts).
import assert from 'node:assert/strict';
import { concurrency } from '../policies/concurrency.js';
import { fixedWindow } from '../policies/fixed-window.js';
import { tokenBucket } from '../policies/token-bucket.js';
import { type Answering, CAPACITY, settle, shaping, T0, unitsLeft } from './adapter-contract-fixtures.js';
import {
  type AdapterCase,
  type ContractApp,
  type ContractOptions,
  registerCases,
  request,
  STREAMED,
  streaming,
  type WithApp,
} from './adapter-contract-http.js';

/** A shaping fixture whose limit is `max` requests in flight. */
const slots = (max: number) => shaping(concurrency({ max, leaseMs: '1m' }));

const CONCURRENCY: Record<string, AdapterCase> = {
  'with a concurrency limit of 1: 429 while a request is in flight, 200 once it finished; a 429 holds nothing':
    async (withApp) => {
      const fx = slots(1);
      await withApp(fx.options(), async (app) => {
        fx.answer({ held: true });
        const first = request(app);
        await fx.until(() => fx.traffic.inRoute === 1, 'the first request never reached the route');
        assert.equal((await request(app)).status, 429);
        fx.answer({});
        fx.letGo();
        assert.equal((await first).status, 200);
        await fx.until(() => fx.counts.releases === 1, 'the finished request never released its slot');
        assert.equal((await request(app)).status, 200);
      });
      await settle();
      // Both admissions released once each, though each response both finished and closed.
      assert.deepEqual(fx.counts, { releases: 2, refunds: 0 });
      assert.equal(await unitsLeft(fx.limiter), 1);
    },

  'holds the slot while the response streams, and releases it after the last chunk': async (withApp) => {
    const fx = slots(1);
    await withApp(fx.options(), async (app) => {
      fx.answer({ held: true, stream: true });
      const first = await streaming(app);
      assert.equal(first.status, 200);
      assert.equal((await request(app)).status, 429);
      fx.answer({});
      fx.letGo();
      assert.equal(await first.rest(), STREAMED.join(''));
      await fx.until(() => fx.counts.releases === 1, 'the streamed request never released its slot');
      assert.equal((await request(app)).status, 200);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 2, refunds: 0 });
  },

  "releases the slot of a handler that throws, once the framework's 500 is sent": async (withApp) => {
    const fx = slots(1);
    await withApp(fx.options(), async (app) => {
      fx.answer({ throws: true });
      assert.equal((await request(app)).status, 500);
      await fx.until(() => fx.counts.releases === 1, 'the failed request never released its slot');
      fx.answer({});
      assert.equal((await request(app)).status, 200);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 2, refunds: 0 });
  },

  'never has more than max requests in flight under N concurrent clients, and serves them all in turn':
    async (withApp) => {
      const max = 3;
      const clients = 10;
      const fx = slots(max);
      await withApp(fx.options(), async (app) => {
        fx.answer({ held: true });
        // Every waiting client asks at once; those admitted hold until all are answered, then the rest ask again.
        for (let waiting = clients; waiting > 0; ) {
          const { served, denied } = fx.traffic;
          const answers = Array.from({ length: waiting }, () => request(app));
          const asked = waiting;
          await fx.until(
            () => fx.traffic.served + fx.traffic.denied === served + denied + asked,
            `not every one of ${asked} clients was decided`,
          );
          const admitted = Math.min(max, waiting);
          assert.equal(fx.traffic.served - served, admitted);
          fx.letGo();
          const statuses = (await Promise.all(answers)).map((answer) => answer.status).sort();
          assert.deepEqual(statuses, [...Array(admitted).fill(200), ...Array(waiting - admitted).fill(429)]);
          await fx.until(() => fx.counts.releases === fx.traffic.served, 'the wave never released its slots');
          waiting -= admitted;
        }
      });
      assert.equal(fx.traffic.served, clients);
      assert.equal(fx.traffic.peak, max);
      assert.equal(await unitsLeft(fx.limiter), max);
    },
};

/** A shaping fixture on a token bucket of `capacity`, refilling one unit a second. */
const bucket = (capacity = CAPACITY) => shaping(tokenBucket({ capacity, refillPerSecond: 1 }));
// Each side of the 400 boundary twice, in a bucket that holds them all: a refund still on its way after its
// response arrived cannot turn the next request into a 429.
const statuses: Answering[] = [{ status: 200 }, { status: 399 }, { status: 400 }, { status: 503 }];

/** Requests one after the other, each answered with the next plan; checks the status each got. */
async function answerEach(fx: ReturnType<typeof shaping>, app: ContractApp, plans: readonly Answering[]) {
  for (const plan of plans) {
    fx.answer(plan);
    assert.equal((await request(app)).status, plan.status ?? 200);
  }
}

const REFUNDS: Record<string, AdapterCase> = {
  'skipFailedRequests refunds each response with status >= 400, once': async (withApp) => {
    const fx = bucket(statuses.length);
    await withApp(fx.options({ skipFailedRequests: true }), async (app) => {
      await answerEach(fx, app, statuses);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 0, refunds: 2 });
    assert.equal(await unitsLeft(fx.limiter), statuses.length - 2);
  },

  'skipSuccessfulRequests refunds each response with status < 400, once': async (withApp) => {
    const fx = bucket(statuses.length);
    await withApp(fx.options({ skipSuccessfulRequests: true }), async (app) => {
      await answerEach(fx, app, statuses);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 0, refunds: 2 });
    assert.equal(await unitsLeft(fx.limiter), statuses.length - 2);
  },

  'requestWasSuccessful decides instead of the status, from the response; what it throws is logged and failed':
    async (withApp) => {
      const fx = bucket();
      const verdicts: (string | undefined)[] = [];
      const requestWasSuccessful = async (verdict: string | undefined) => {
        verdicts.push(verdict);
        if (verdict === 'throw') throw new Error('verdict failed');
        return verdict === 'ok';
      };
      await withApp(fx.options({ skipFailedRequests: true, requestWasSuccessful }), async (app) => {
        await answerEach(fx, app, [
          { status: 200, verdict: 'bad' },
          { status: 500, verdict: 'ok' },
          { status: 200, verdict: 'throw' },
        ]);
      });
      await settle();
      assert.deepEqual(verdicts, ['bad', 'ok', 'throw']);
      assert.deepEqual(fx.counts, { releases: 0, refunds: 2 });
      assert.equal(await unitsLeft(fx.limiter), CAPACITY - 1);
      assert.equal(fx.logger.error.mock.callCount(), 1);
      const [error] = fx.logger.error.mock.calls[0]?.arguments ?? [];
      assert.ok(error instanceof Error && error.message === 'verdict failed');
    },

  'a failed response that outlived its window gives nothing to the window the next requests opened': async (
    withApp,
  ) => {
    const fx = shaping(fixedWindow({ limit: CAPACITY, windowMs: 1000 }));
    await withApp(fx.options({ skipFailedRequests: true }), async (app) => {
      fx.answer({ held: true, status: 500 });
      const slow = request(app);
      await fx.until(() => fx.traffic.inRoute === 1, 'the route never held the request');
      // Its window ends while it is in the route; the next requests open a new one and spend it whole.
      fx.clock.now += 1000;
      await answerEach(fx, app, Array(CAPACITY).fill({}));
      fx.letGo();
      assert.equal((await slow).status, 500);
      await fx.until(() => fx.counts.refunds === 1, 'the failed request was never given back');
      assert.equal((await request(app)).status, 429);
    });
    assert.equal(await unitsLeft(fx.limiter), 0);
  },

  'a failed response on a busy bucket gets back the token its refill has not reached yet': async (
    withApp,
  ) => {
    const fx = bucket();
    await withApp(fx.options({ skipFailedRequests: true }), async (app) => {
      await answerEach(fx, app, Array(CAPACITY - 1).fill({}));
      fx.answer({ held: true, status: 500 });
      const slow = request(app);
      await fx.until(() => fx.traffic.inRoute === 1, 'the route never held the request');
      // Spent last, its token refills in the last second of the bucket's refill: a second on, none of it has.
      fx.clock.now += 1000;
      fx.letGo();
      assert.equal((await slow).status, 500);
      await fx.until(() => fx.counts.refunds === 1, 'the failed request was never given back');
    });
    assert.equal(await unitsLeft(fx.limiter), 2);
  },

  'never refunds a denial, nor one shadow mode let through': async (withApp) => {
    const fx = bucket();
    await withApp(
      fx.options({ skipFailedRequests: true, handler: () => ({ status: 503, body: {} }) }),
      async (app) => {
        await answerEach(fx, app, Array(CAPACITY).fill({}));
        assert.equal((await request(app)).status, 503);
      },
    );
    const shadow = bucket();
    await withApp(shadow.options({ skipFailedRequests: true, shadow: true, cost: CAPACITY }), async (app) => {
      await answerEach(shadow, app, [{}, { status: 500 }]);
    });
    await settle();
    assert.equal(fx.traffic.denied, 1);
    assert.equal(shadow.traffic.denied, 1);
    assert.deepEqual(
      [fx.counts, shadow.counts],
      [
        { releases: 0, refunds: 0 },
        { releases: 0, refunds: 0 },
      ],
    );
    assert.equal(await unitsLeft(shadow.limiter), 0);
  },

  'locks a client out after failed logins: 429 with a Retry-After covering the block, then lets it in':
    async (withApp) => {
      const fx = bucket();
      const login: ContractOptions = {
        ...fx.observing,
        policy: tokenBucket({ capacity: CAPACITY, refillPerSecond: 1 }),
        store: fx.store,
        scope: 'login',
        blockMs: '15m',
        skipSuccessfulRequests: true,
        identifier: () => 'alice',
      };
      await withApp(login, async (app) => {
        // Successful logins are given back: any number of them never lock anyone out.
        for (let i = 1; i <= CAPACITY * 2; i++) {
          await answerEach(fx, app, [{}]);
          await fx.until(() => fx.counts.refunds === i, 'a successful login was not refunded');
        }
        await answerEach(fx, app, Array(CAPACITY).fill({ status: 401 }));
        const locked = await request(app);
        assert.equal(locked.status, 429);
        assert.equal(locked.headers.get('retry-after'), '900');
        fx.clock.now += 60_000;
        const still = await request(app);
        assert.equal(still.status, 429);
        assert.equal(still.headers.get('retry-after'), '840');
        fx.clock.now = T0 + 900_000;
        await answerEach(fx, app, [{}]);
      });
    },
};

export function concurrencyContract(withApp: WithApp): void {
  registerCases(CONCURRENCY, withApp);
}

export function refundContract(withApp: WithApp): void {
  registerCases(REFUNDS, withApp);
}
