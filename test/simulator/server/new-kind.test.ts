// A policy kind the library does not ship, given to simulatorHandler as a description: listed for the page and simulated.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { configError, TollgateError } from '../../../src/core/errors.js';
import { simulate } from '../../../src/simulator/engine/index.js';
import type { PolicyMenuEntry } from '../../../src/simulator/server/policy-menu.js';
import { simulatorHandler } from '../../../src/simulator/server/simulator-handler.js';
import { leakyBucketDescription } from '../../fixtures/leaky-bucket.js';

const LEAKY = { kind: 'leaky-bucket', capacity: 3, leak: 1, everyMs: 1000 };
const ARRIVALS = [0, 0, 0, 0, 0, 1000, 1000, 2500];

async function serve(
  handler: ReturnType<typeof simulatorHandler>,
): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function close(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

function post(base: string, body: unknown): Promise<Response> {
  return fetch(`${base}/api/simulate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function menu(base: string): Promise<PolicyMenuEntry[]> {
  const response = await fetch(`${base}/api/policies`);
  assert.equal(response.status, 200);
  assert.match(String(response.headers.get('content-type')), /^application\/json/);
  return (await response.json()) as PolicyMenuEntry[];
}

describe('simulatorHandler given a policy kind of its own', () => {
  let server: Server;
  let base: string;

  before(async () => {
    ({ server, base } = await serve(simulatorHandler({ policies: [leakyBucketDescription] })));
  });

  after(() => close(server));

  it('lists it for the page after the built-in kinds, as its description presents it', async () => {
    const kinds = await menu(base);
    assert.deepEqual(
      kinds.map((entry) => entry.kind),
      [
        'token-bucket',
        'fixed-window',
        'sliding-window',
        'sliding-window-counter',
        'concurrency',
        'leaky-bucket',
      ],
    );
    assert.deepEqual(kinds.at(-1), {
      kind: 'leaky-bucket',
      label: 'Leaky bucket',
      fields: [
        ['capacity', 'Capacity', '5'],
        ['leak', 'Leak per tick', '1'],
        ['everyMs', 'Tick (ms)', '1000'],
      ],
      leased: false,
    });
  });

  it('simulates it at POST /api/simulate, as simulate() does', async () => {
    const response = await post(base, { policies: [LEAKY], arrivals: ARRIVALS });
    assert.equal(response.status, 200);
    const answer = await response.json();
    assert.deepEqual(
      answer,
      JSON.parse(
        JSON.stringify(
          simulate({ policies: [LEAKY], arrivals: ARRIVALS }, { policies: [leakyBucketDescription] }),
        ),
      ),
    );
    assert.equal(answer.policies[0].summary.admitted, 5);
    assert.equal(answer.policies[0].summary.rejected, 3);
  });

  it('refuses its options that are not the description’s, as for a built-in kind', async () => {
    const response = await post(base, { policies: [{ ...LEAKY, rate: 1 }], arrivals: [0] });
    assert.equal(response.status, 400);
    const { error, code, option } = await response.json();
    assert.match(error, /^policy 1: `rate` is not an option of a leaky-bucket policy/);
    assert.deepEqual([code, option], ['ERR_TOLLGATE_CONFIG', 'rate']);
  });
});

describe('simulatorHandler without kinds of its own', () => {
  it('lists the built-in kinds, their limits named and the leased one marked, and refuses another', async () => {
    const { server, base } = await serve(simulatorHandler());
    try {
      const kinds = await menu(base);
      assert.deepEqual(
        kinds.map(({ kind, label, limitLabel, leased }) => [kind, label, limitLabel, leased]),
        [
          ['token-bucket', 'Token bucket', 'capacity', false],
          ['fixed-window', 'Fixed window', undefined, false],
          ['sliding-window', 'Sliding window (log)', undefined, false],
          ['sliding-window-counter', 'Sliding window counter', undefined, false],
          ['concurrency', 'Concurrency limit', 'max in flight', true],
        ],
      );
      const response = await post(base, { policies: [LEAKY], arrivals: [0] });
      assert.equal(response.status, 400);
      const { error, option } = await response.json();
      assert.match(
        error,
        /^policy 1: `kind` must be one of "token-bucket", .*"concurrency" \(received "leaky-bucket"\)/,
      );
      assert.equal(option, 'kind');
      // Only GET and HEAD read the list.
      assert.equal((await fetch(`${base}/api/policies`, { method: 'POST' })).status, 404);
    } finally {
      await close(server);
    }
  });

  it('checks `policies` when it is created, naming the option', () => {
    const fails = (policies: unknown, message: RegExp) =>
      assert.throws(
        () => simulatorHandler({ policies: policies as never }),
        (error: unknown) =>
          error instanceof TollgateError && error.option === 'policies' && message.test(error.message),
      );
    fails({ kind: 'leaky-bucket' }, /must be an array of policy descriptions/);
    fails([{ kind: 'leaky-bucket' }], /entry 1 must be a policy description/);
    fails(
      [
        {
          ...leakyBucketDescription,
          build: () => {
            throw configError('capacity', 'must be a positive integer');
          },
        },
      ],
      /form defaults that build a policy \(the leaky-bucket defaults: `capacity` must be a positive integer/,
    );
  });
});
