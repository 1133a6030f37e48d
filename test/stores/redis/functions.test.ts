// How RedisStore runs its engine: as a Redis 7 function, loaded again when a server lacks it, and as a script on a
// server or client that cannot run functions, from then on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLimiter, tokenBucket } from '../../../src/index.js';
import { BUILT_IN_ENGINE } from '../../../src/stores/redis/engine/engine.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { connectedIoredis } from '../../harness/fake-ioredis.js';

const { functionName: FUNCTION_NAME, library: LIBRARY } = BUILT_IN_ENGINE;

const NOW = 1_000_000;
/** A lone policy's admission in the engine's reply: allowed, remaining, reset, delay. */
const admitted = (keys: number) => [NOW, ...Array.from({ length: keys }, () => [1, 4, 1000, 0]).flat()];

type Step = () => Promise<unknown> | undefined;

/** An ioredis-shaped client that records each call; `fcall` and `load` may be told how to fail, once each. */
function recordingClient() {
  const calls: string[] = [];
  const failures: { fcall: string[]; load: string[] } = { fcall: [], load: [] };
  const fail = (queue: string[]): Step => {
    const message = queue.shift();
    return message === undefined ? () => undefined : () => Promise.reject(new Error(message));
  };
  const client = connectedIoredis({
    fcall: (name: string, keys: number) => {
      calls.push(`FCALL ${name === FUNCTION_NAME ? 'engine' : name}`);
      return fail(failures.fcall)() ?? Promise.resolve(admitted(keys));
    },
    call: (...args: string[]) => {
      calls.push(`${args.slice(0, -1).join(' ')} ${args.at(-1) === LIBRARY ? 'engine' : 'other'}`);
      return fail(failures.load)() ?? Promise.resolve('OK');
    },
    evalsha: (_sha: string, keys: number) => {
      calls.push('EVALSHA');
      return Promise.resolve(admitted(keys));
    },
    eval: (_script: string, keys: number) => {
      calls.push('EVAL');
      return Promise.resolve(admitted(keys));
    },
  });
  return { client, calls, failures };
}

async function decisions(setup: ReturnType<typeof recordingClient>, count: number) {
  const store = new RedisStore({
    client: setup.client,
    clock: () => NOW,
    logger: { warn: () => {}, error: () => {} },
  });
  try {
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }), store });
    const made = [];
    for (let i = 0; i < count; i++) made.push(await limiter.consume(`id-${i}`));
    return { made, reloads: store.stats().scriptReloads };
  } finally {
    await store.close();
  }
}

describe('RedisStore engine calls', () => {
  it('calls its function, and loads the library only when a server lacks it', async () => {
    const setup = recordingClient();
    setup.failures.fcall.push('ERR Function not found');
    const { made, reloads } = await decisions(setup, 2);
    assert.deepEqual(
      made.map((d) => [d.allowed, d.degraded]),
      [
        [true, undefined],
        [true, undefined],
      ],
    );
    assert.deepEqual(setup.calls, ['FCALL engine', 'FUNCTION LOAD engine', 'FCALL engine', 'FCALL engine']);
    assert.equal(reloads, 1);
  });

  for (const [what, failures] of [
    [
      'a server before Redis 7',
      { fcall: ["ERR unknown command 'FCALL', with args beginning with: "], load: [] },
    ],
    [
      'a user not allowed to load functions',
      {
        fcall: ['ERR Function not found'],
        load: ["NOPERM this user has no permissions to run the 'function|load' command"],
      },
    ],
  ] as const) {
    it(`runs the engine as a script from then on, on ${what}`, async () => {
      const setup = recordingClient();
      setup.failures.fcall.push(...failures.fcall);
      setup.failures.load.push(...failures.load);
      const { made } = await decisions(setup, 3);
      assert.ok(made.every((d) => d.allowed && d.degraded === undefined));
      const first = setup.calls.indexOf('EVALSHA');
      assert.ok(first > 0, setup.calls.join(', '));
      assert.deepEqual(setup.calls.slice(first), ['EVALSHA', 'EVALSHA', 'EVALSHA']);
    });
  }

  it('loads the library once for the calls that found it missing together', async () => {
    const setup = recordingClient();
    setup.failures.fcall.push('ERR Function not found', 'ERR Function not found');
    const store = new RedisStore({ client: setup.client, clock: () => NOW });
    try {
      // Two limiters: two script calls in one turn.
      const limiters = [1, 2].map((capacity) =>
        createLimiter({ policy: tokenBucket({ capacity, refillPerSecond: 1 }), store }),
      );
      const made = await Promise.all(limiters.map((limiter) => limiter.consume('a')));
      assert.ok(made.every((d) => d.allowed && d.degraded === undefined));
      assert.equal(setup.calls.filter((call) => call.startsWith('FUNCTION LOAD')).length, 1);
      assert.equal(store.stats().scriptReloads, 1);
    } finally {
      await store.close();
    }
  });

  it('makes a decision refused as a whole for want of memory as a script, whose denials need no write', async () => {
    const setup = recordingClient();
    setup.failures.fcall.push("OOM command not allowed when used memory > 'maxmemory'.");
    const { made } = await decisions(setup, 2);
    assert.ok(made.every((d) => d.allowed && d.degraded === undefined));
    assert.deepEqual(setup.calls, ['FCALL engine', 'EVALSHA', 'FCALL engine']);
  });

  it('keeps its function when a user may not touch a key (a refusal of that call alone)', async () => {
    const setup = recordingClient();
    setup.failures.fcall.push(
      'NOPERM this user has no permissions to access one of the keys used as arguments',
    );
    const { made } = await decisions(setup, 2);
    assert.deepEqual(
      made.map((d) => d.degraded),
      ['fail-open', undefined],
    );
    assert.deepEqual(setup.calls, ['FCALL engine', 'FCALL engine']);
  });

  it('keeps calling its function after a load that failed for want of the server', async () => {
    const setup = recordingClient();
    setup.failures.fcall.push('ERR Function not found');
    setup.failures.load.push('Connection is closed.');
    const { made } = await decisions(setup, 2);
    assert.deepEqual(
      made.map((d) => d.degraded),
      ['fail-open', undefined],
    );
    assert.deepEqual(setup.calls, ['FCALL engine', 'FUNCTION LOAD engine', 'FCALL engine']);
  });

  it('loads again when the server lost the library between a load and the call, a few times', async () => {
    const setup = recordingClient();
    setup.failures.fcall.push(...Array.from({ length: 3 }, () => 'ERR Function not found'));
    const { made, reloads } = await decisions(setup, 1);
    assert.equal(made[0]?.degraded, undefined, 'decided by the engine after the third load');
    assert.equal(reloads, 3);
    assert.deepEqual(setup.calls, [
      ...Array.from({ length: 3 }, () => ['FCALL engine', 'FUNCTION LOAD engine']).flat(),
      'FCALL engine',
    ]);
  });

  it('gives a call up after three loads that did not stick', async () => {
    const setup = recordingClient();
    setup.failures.fcall.push(...Array.from({ length: 4 }, () => 'ERR Function not found'));
    const { made } = await decisions(setup, 2);
    assert.deepEqual(
      made.map((d) => d.degraded),
      ['fail-open', undefined],
    );
    assert.equal(setup.calls.filter((call) => call === 'FUNCTION LOAD engine').length, 3);
  });

  it('runs the engine as a script on a client library without FCALL', async () => {
    const setup = recordingClient();
    const { fcall: _, ...withoutFcall } = setup.client;
    const store = new RedisStore({ client: withoutFcall, clock: () => NOW });
    try {
      const limiter = createLimiter({ policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }), store });
      assert.equal((await limiter.consume('a')).allowed, true);
      assert.deepEqual(setup.calls, ['EVALSHA']);
    } finally {
      await store.close();
    }
  });
});
