// One side of a differential case: a case's limiters built by one library's rateLimit, run, with what they logged;
// and a recording store whose calls two sides must make alike.
import type { TestContext } from 'node:test';
import type { RequestHandler } from 'express';
import type { Case, Library } from './express-rate-limit-cases.js';
import { type Answer, runSequence } from './express-rate-limit-harness.js';

export type Limit = (options: Record<string, unknown>) => RequestHandler;

/**
 * Runs `kase` with limiters made by `limit`, the n-th given `{ store: storeOf(n) }` when `storeOf` gives one; the
 * answers, and the log lines of the default logger (console), which is mocked for the run.
 */
export async function runCase(
  t: TestContext,
  limit: Limit,
  library: Library,
  kase: Case,
  storeOf: (index: number) => unknown = () => undefined,
): Promise<{ answers: Answer[]; logs: unknown[] }> {
  const warn = t.mock.method(console, 'warn', () => undefined);
  const error = t.mock.method(console, 'error', () => undefined);
  const limiters = () =>
    [kase.options(library), ...(kase.stacked ?? [])].map((options, index) => {
      const store = storeOf(index);
      return limit(store === undefined ? options : { ...options, store });
    });
  try {
    const answers = await runSequence(limiters, kase.steps, kase.property, kase.trustProxy);
    return { answers, logs: [...logLines(warn.mock.calls, 'warn'), ...logLines(error.mock.calls, 'error')] };
  } finally {
    warn.mock.restore();
    error.mock.restore();
  }
}
/**
 * What a logger was told, comparable across libraries: an error by its code (or message), anything else as is.
 * Node's own warnings printed through console.error (an experimental API's, on first use) are left out.
 */
export function logLines(calls: readonly { arguments: readonly unknown[] }[], level: string): unknown[] {
  const ours = calls.filter((call) => !String(call.arguments[0]).startsWith('(node:'));
  return ours.map((call) => [
    level,
    ...call.arguments.map((argument) =>
      argument instanceof Error ? ((argument as { code?: string }).code ?? argument.message) : argument,
    ),
  ]);
}

/**
 * An express-rate-limit store in memory, counting as its MemoryStore does (a window per client from its first hit,
 * on Date.now), that records each call made of it: given to both middlewares, the calls must match one by one.
 */
export class RecordingStore {
  readonly calls: unknown[][] = [];
  readonly localKeys = true;
  #windowMs = 0;
  readonly #clients = new Map<string, { totalHits: number; resetTime: Date }>();

  init(options: { windowMs: number }): void {
    this.calls.push(['init', options.windowMs]);
    this.#windowMs = options.windowMs;
  }

  async increment(key: string) {
    this.calls.push(['increment', key]);
    let client = this.#clients.get(key);
    if (client === undefined || client.resetTime.getTime() <= Date.now()) {
      client = { totalHits: 0, resetTime: new Date(Date.now() + this.#windowMs) };
      this.#clients.set(key, client);
    }
    client.totalHits++;
    return { ...client };
  }

  async decrement(key: string): Promise<void> {
    this.calls.push(['decrement', key]);
    const client = this.#clients.get(key);
    if (client !== undefined && client.totalHits > 0) client.totalHits--;
  }

  async get(key: string) {
    this.calls.push(['get', key]);
    const client = this.#clients.get(key);
    return client === undefined || client.resetTime.getTime() <= Date.now() ? undefined : { ...client };
  }

  async resetKey(key: string): Promise<void> {
    this.calls.push(['resetKey', key]);
    this.#clients.delete(key);
  }
}
