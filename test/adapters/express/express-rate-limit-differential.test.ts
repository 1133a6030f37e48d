// express-rate-limit 8 and tollgate/express-rate-limit side by side: the option sets of its documentation, the same
// requests on the same mocked clock over loopback HTTP, and the same answers request by request (status, rate-limit
// fields, Retry-After, body, the request's figures) and the same log lines, on each side's default store and on one
// fake store whose calls must match call by call. Redis: express-rate-limit-redis.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipKeyGenerator as erlKeys, rateLimit as erlRateLimit } from 'express-rate-limit';
import { ipKeyGenerator, rateLimit } from '../../../src/adapters/express/express-rate-limit/index.js';
import { CASES } from './express-rate-limit-edge-cases.js';
import { type Limit, RecordingStore, runCase } from './express-rate-limit-sides.js';

describe('express-rate-limit and tollgate/express-rate-limit answer alike, each on its default store', () => {
  for (const kase of CASES)
    it(kase.name, async (t) => {
      const theirs = await runCase(t, erlRateLimit as Limit, { ipKeyGenerator: erlKeys }, kase);
      const ours = await runCase(t, rateLimit as Limit, { ipKeyGenerator }, kase);
      const reported = theirs.logs.flatMap((line) =>
        (line as string[]).filter((part) => /^(ERR|WRN)_ERL_/.test(part)),
      );
      assert.deepEqual(reported.sort(), [...(kase.reports ?? [])].sort(), "express-rate-limit's reports");
      assert.deepEqual(ours.answers, theirs.answers);
      assert.deepEqual(ours.logs, theirs.logs, 'log lines');
    });
});

describe('express-rate-limit and tollgate/express-rate-limit ask a store alike, call by call', () => {
  for (const kase of CASES)
    it(kase.name, async (t) => {
      const [erlStores, ourStores] = [[] as RecordingStore[], [] as RecordingStore[]];
      const into = (stores: RecordingStore[]) => () => stores[stores.push(new RecordingStore()) - 1];
      const theirs = await runCase(
        t,
        erlRateLimit as Limit,
        { ipKeyGenerator: erlKeys },
        kase,
        into(erlStores),
      );
      const ours = await runCase(t, rateLimit as Limit, { ipKeyGenerator }, kase, into(ourStores));
      assert.deepEqual(ours.answers, theirs.answers);
      assert.deepEqual(ours.logs, theirs.logs, 'log lines');
      assert.deepEqual(
        ourStores.map((store) => store.calls),
        erlStores.map((store) => store.calls),
        'store calls',
      );
    });
});
