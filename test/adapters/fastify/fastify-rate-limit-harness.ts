// Runs @fastify/rate-limit and tollgate/fastify-rate-limit side by side, request by request, on one mocked clock.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type InjectOptions } from 'fastify';
import dropIn from '../../../src/adapters/fastify/fastify-rate-limit/index.js';

export const T0 = Date.UTC(2030, 0, 1);

/**
 * The original, loaded by `require`, whose result the type checker does not follow: its type declarations would add
 * its own signatures of `fastify.rateLimit` to every Fastify instance of the project's tests. Tests run from the
 * repository's root.
 */
export const require = createRequire(`${process.cwd()}/`);
const originalModule = require('@fastify/rate-limit') as {
  default: FastifyPluginAsync;
  normalizeIP: (ip: string, ipv6Subnet?: number) => string;
};
export const original = originalModule.default;
export const originalNormalizeIP = originalModule.normalizeIP;

/** Which plugin a side runs: the options builder may give each its own store. */
export type Which = 'original' | 'drop-in';

/** What a side's callbacks were called with, in order. */
export type Events = string[];

/** Builds one side's app: register the plugin (given) with its options, then declare routes. */
export type Build = (
  app: FastifyInstance,
  plugin: FastifyPluginAsync,
  events: Events,
  which: Which,
) => Promise<void>;

/** One step of a scenario: a request (a URL or inject options), or time moving on. */
export type Step = string | InjectOptions | { tick: number };

/** What is compared of a response: status, every rate-limit header, the content type and the body. */
const COMPARED = /^(x-ratelimit-|ratelimit-|retry-after$|content-type$)/;

export interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

async function answer(app: FastifyInstance, request: string | InjectOptions): Promise<Answer> {
  const response = await app.inject(request);
  const headers = Object.fromEntries(
    Object.entries(response.headers).filter(([name]) => COMPARED.test(name)),
  );
  return { status: response.statusCode, headers, body: response.body };
}

/** A callback that records its name, key and URL: `onExceeding`, `onExceeded`, `onBanReach`. */
export function recorder(events: Events, name: string) {
  return (req: { url: string }, key: unknown) => {
    events.push(`${name} ${String(key)} ${req.url}`);
  };
}

export interface Pair {
  /** Sends a request to both, asserts they answer alike (and called back alike), and returns the answer. */
  send(request: string | InjectOptions): Promise<Answer>;
  /** Runs steps, checking every request; returns the drop-in's answers. */
  run(steps: readonly Step[]): Promise<Answer[]>;
  readonly events: { readonly original: Events; readonly dropIn: Events };
}

/** Both apps built alike, the clock (Date) mocked from T0 unless `clock` is false; closed when the test ends. */
export async function pair(t: TestContext, build: Build, clock = true): Promise<Pair> {
  if (clock) t.mock.timers.enable({ apis: ['Date'], now: T0 });
  const events = { original: [] as Events, dropIn: [] as Events };
  const apps = [Fastify(), Fastify()] as const;
  t.after(() => Promise.all(apps.map((app) => app.close())));
  await build(apps[0], original, events.original, 'original');
  await build(apps[1], dropIn as unknown as FastifyPluginAsync, events.dropIn, 'drop-in');
  await Promise.all(apps.map((app) => app.ready()));
  const send = async (request: string | InjectOptions) => {
    const expected = await answer(apps[0], request);
    const actual = await answer(apps[1], request);
    const what = typeof request === 'string' ? request : `${request.method ?? 'GET'} ${String(request.url)}`;
    assert.deepEqual(actual, expected, `${what}: the answers differ`);
    assert.deepEqual(events.dropIn, events.original, `${what}: the callbacks differ`);
    return actual;
  };
  const run = async (steps: readonly Step[]) => {
    const answers: Answer[] = [];
    for (const step of steps) {
      if (typeof step === 'object' && 'tick' in step) t.mock.timers.tick(step.tick);
      else answers.push(await send(step));
    }
    return answers;
  };
  return { send, run, events };
}

/** `n` times the same request. */
export function times(n: number, step: Step): Step[] {
  return Array.from({ length: n }, () => step);
}
