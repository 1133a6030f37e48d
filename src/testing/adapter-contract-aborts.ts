// The adapter contract for clients that leave before their response: their slots held while their handlers run,
// and their requests counted, not refunded, unless `abortedRequestsFail` says an abort failed.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { mock } from 'node:test';
import { concurrency } from '../policies/concurrency.js';
import { fixedWindow } from '../policies/fixed-window.js';
import { settle, shaping } from './adapter-contract-fixtures.js';
import {
  type AdapterCase,
  type ContractOptions,
  connectionClosed,
  registerCases,
  request,
  resetWhileHeld,
  STREAMED,
  type WithApp,
} from './adapter-contract-http.js';

/**
 * Keeps each request as it arrives (an app step before the limiter), so a test can wait until the server has seen
 * its client leave: the adapter's close handling has run by then.
 */
function arrivals() {
  const seen: IncomingMessage[] = [];
  return {
    beforeLimit: async (req: IncomingMessage) => {
      seen.push(req);
    },
    /** Resolves once the server has seen the connection of the n-th request (from 0) close. */
    left: async (n: number) => {
      const req = seen[n];
      assert.ok(req, `request ${n + 1} never arrived`);
      await connectionClosed(req);
      await settle();
    },
  };
}

const ABORTS: Record<string, AdapterCase> = {
  'holds the slots of clients that left while their handlers run, and frees them once those handlers end':
    async (withApp) => {
      const max = 2;
      const clients = 6;
      const fx = shaping(concurrency({ max, leaseMs: '1m' }));
      const arrived = arrivals();
      await withApp(fx.options({ beforeLimit: arrived.beforeLimit }), async (app) => {
        fx.answer({ held: true });
        // One at a time, each client sends its request, waits until the server has decided it, and resets.
        for (let i = 0; i < clients; i++) {
          const decided = () => fx.traffic.served + fx.traffic.denied === i + 1;
          await resetWhileHeld(app, fx.until(decided, `request ${i + 1} was never decided`));
          await arrived.left(i);
        }
        const { served, denied, inRoute, peak } = fx.traffic;
        assert.deepEqual(
          { served, denied, inRoute, peak },
          { served: max, denied: clients - max, inRoute: max, peak: max },
        );
        assert.equal(fx.counts.releases, 0);
        fx.answer({});
        assert.equal((await request(app)).status, 429);
        // The held handlers now answer their clients that left: once they are done, the slots are free.
        fx.letGo();
        await fx.until(
          () => fx.counts.releases === max,
          'the handlers ended, but their slots were never freed',
        );
        assert.equal((await request(app)).status, 200);
      });
      await settle();
      assert.deepEqual(fx.counts, { releases: max + 1, refunds: 0 });
      assert.equal(fx.traffic.peak, max);
    },

  'frees the slot of a client that left mid-stream once, by the time its stream is done': async (withApp) => {
    const fx = shaping(concurrency({ max: 1, leaseMs: '1m' }));
    const arrived = arrivals();
    await withApp(fx.options({ beforeLimit: arrived.beforeLimit }), async (app) => {
      fx.answer({ held: true, stream: true });
      const held = fx.until(() => fx.traffic.inRoute === 1, 'the route never held the request');
      await resetWhileHeld(app, held, STREAMED[0]);
      await arrived.left(0);
      // A framework that streams the body itself stops it as the client leaves; a handler that writes it ends it.
      fx.answer({});
      fx.letGo();
      await fx.until(() => fx.counts.releases === 1, 'the slot of the stream was never freed');
      assert.equal((await request(app)).status, 200);
    });
    await settle();
    assert.deepEqual(fx.counts, { releases: 2, refunds: 0 });
  },

  'counts clients that left before their response under either skip option; abortedRequestsFail refunds them as they leave':
    async (withApp) => {
      const limit = 5;
      const clients = 8;
      const cases: [ContractOptions, number][] = [
        [{ skipFailedRequests: true }, limit],
        [{ skipSuccessfulRequests: true }, limit],
        [{ skipFailedRequests: true, abortedRequestsFail: true }, clients],
      ];
      for (const [options, admitted] of cases) {
        const what = JSON.stringify(options);
        const fx = shaping(fixedWindow({ limit, windowMs: 60_000 }));
        const arrived = arrivals();
        // Never asked for a client that left; were it asked, it would call every request a success.
        const requestWasSuccessful = mock.fn(() => true);
        const more = { ...options, requestWasSuccessful, beforeLimit: arrived.beforeLimit };
        await withApp(fx.options(more), async (app) => {
          fx.answer({ held: true });
          for (let i = 0; i < clients; i++) {
            const decided = () => fx.traffic.served + fx.traffic.denied === i + 1;
            await resetWhileHeld(app, fx.until(decided, `${what}: request ${i + 1} was never decided`));
            await arrived.left(i);
            // Given back as its client leaves, while its handler still runs.
            if (admitted === clients)
              await fx.until(() => fx.counts.refunds === i + 1, `${what}: request ${i + 1} was not refunded`);
          }
          assert.equal(fx.traffic.inRoute, admitted, what);
          // The handlers answer their clients that left: that changes nothing.
          fx.letGo();
          await fx.until(() => fx.traffic.inRoute === 0, `${what}: the handlers never ended`);
        });
        await settle();
        assert.deepEqual(
          { served: fx.traffic.served, denied: fx.traffic.denied, refunds: fx.counts.refunds },
          { served: admitted, denied: clients - admitted, refunds: admitted === clients ? clients : 0 },
          what,
        );
        assert.equal(requestWasSuccessful.mock.callCount(), 0, what);
      }
    },
};

export function abortContract(withApp: WithApp): void {
  registerCases(ABORTS, withApp);
}
