// The store contract: a store class of @fastify/rate-limit's given to both, called and answered alike.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { build, type Extra, SCENARIOS } from './fastify-rate-limit-cases.js';
import { type Events, pair, times } from './fastify-rate-limit-harness.js';

interface Window {
  current: number;
  start: number;
}

/**
 * A store of the plugin's contract that writes each call into the side's events: its construction (the options'
 * values), each hit (key, its type, window, max), each child (the route and its options). It counts as the
 * plugin's local store does, answers on a later tick, and fails every hit when `failing`.
 */
function fakeStore(events: Events, failing = false, readable = true) {
  const describe = (options: Record<string, unknown>) =>
    Object.keys(options)
      .sort()
      .map(
        (key) => `${key}=${typeof options[key] === 'function' ? 'function' : JSON.stringify(options[key])}`,
      )
      .join(' ');
  class FakeStore {
    readonly windows = new Map<unknown, Window>();
    constructor(options: Record<string, unknown>) {
      events.push(`new ${describe(options)}`);
    }
    incr(
      key: unknown,
      callback: (error: Error | null, result?: object) => void,
      timeWindow: number,
      max: number,
    ) {
      events.push(`incr ${typeof key} ${String(key)} ${timeWindow} ${max}`);
      if (failing) return process.nextTick(() => callback(new Error('the store is down')));
      const now = Date.now();
      let window = this.windows.get(key);
      if (window === undefined || window.start + timeWindow <= now) window = { current: 0, start: now };
      window.current += 1;
      this.windows.set(key, window);
      const result = { current: window.current, ttl: timeWindow - (now - window.start) };
      process.nextTick(() => callback(null, result));
    }
    child(options: Record<string, unknown> & { routeInfo: { method?: unknown; url?: unknown } }) {
      const { routeInfo, ...rest } = options;
      events.push(`child ${String(routeInfo.method)} ${String(routeInfo.url)} ${describe(rest)}`);
      return new FakeStore({});
    }
  }
  if (readable)
    Object.assign(FakeStore.prototype, {
      read(
        this: FakeStore,
        key: unknown,
        callback: (error: null, result: object) => void,
        timeWindow: number,
      ) {
        events.push(`read ${String(key)} ${timeWindow}`);
        const window = this.windows.get(key);
        const live = window !== undefined && window.start + timeWindow > Date.now();
        callback(
          null,
          live
            ? { current: window.current, ttl: window.start + timeWindow - Date.now() }
            : { current: 0, ttl: 0 },
        );
      },
    });
  return FakeStore;
}

const withFake: Extra = (events) => ({ store: fakeStore(events) });

describe('a store class of the plugin given to both', () => {
  for (const scenario of SCENARIOS)
    it(scenario.name, async (t) => {
      const both = await pair(t, build(scenario, withFake));
      await both.run(scenario.steps);
      assert.ok(both.events.dropIn.some((event) => event.startsWith('incr ')));
    });

  it('skipOnError: true lets a request through a failing store, without headers', async (t) => {
    const scenario = { name: 'skip', options: () => ({ max: 1, skipOnError: true }), steps: [] };
    const both = await pair(
      t,
      build(scenario, (events) => ({ store: fakeStore(events, true) })),
    );
    const answers = await both.run(times(3, '/'));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200],
    );
  });

  it("skipOnError: false hands the store's error to Fastify's error handler", async (t) => {
    const scenario = { name: 'no skip', options: () => ({ max: 1 }), steps: [] };
    const both = await pair(
      t,
      build(scenario, (events) => ({ store: fakeStore(events, true) })),
    );
    const [answer] = await both.run(['/']);
    assert.equal(answer?.status, 500);
  });

  it('a store without `read` fails a check that does not count, and counts nothing', async (t) => {
    const scenario = {
      name: 'no read',
      options: () => ({ global: false }),
      routes: (app: FastifyInstance) => {
        const check = app.createRateLimit();
        app.get('/', async (req) => {
          const failed = await check(req, { increment: false }).then(
            () => false,
            (error: Error) => error instanceof Error,
          );
          return { failed, counted: await check(req) };
        });
      },
      steps: [],
    };
    const both = await pair(
      t,
      build(scenario, (events) => ({ store: fakeStore(events, false, false) })),
    );
    const answer = await both.send('/');
    assert.equal(JSON.parse(answer.body).failed, true);
  });
});
