// createLimiter's option checks and the request it hands its store: exact messages, fields, and how answers come back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AnyPolicy,
  createLimiter,
  fixedWindow,
  type LimiterOptions,
  MemoryStore,
  type Store,
  tokenBucket,
} from '../../src/index.js';
import {
  degradedResponse,
  type PolicyResult,
  type StoreRequest,
  type StoreResponse,
} from '../../src/stores/index.js';
import { sharedMemoryStore } from '../../src/stores/memory/shared-memory-store.js';
import { leakyBucket } from '../fixtures/leaky-bucket.js';
import { pointed } from '../harness/error-pointer.js';
import { sharedScopeWarningsDuring } from '../harness/policy-helpers.js';

/** Asserts `fn` throws a configuration error for `option` with exactly `message`, then the pointer to its code. */
function refuses(fn: () => unknown, option: string, message: string): void {
  assert.throws(fn, {
    name: 'TollgateError',
    code: 'ERR_TOLLGATE_CONFIG',
    option,
    message: pointed(message),
  });
}

const ALLOWED: PolicyResult = { allowed: true, remaining: 4, resetMs: 1000, retryAfterMs: 0 };

/** A store that records every request and answers with `answer` (synchronously unless `answer` returns a promise). */
function recordingStore(
  answer: (request: StoreRequest) => StoreResponse | Promise<StoreResponse> = () => ({
    allowed: true,
    results: [ALLOWED],
    nowMs: 5000,
  }),
) {
  const requests: StoreRequest[] = [];
  const store: Store = {
    evaluate: (request) => {
      requests.push(request);
      return answer(request);
    },
    reset: () => {},
  };
  return { store, requests };
}

const policy = tokenBucket({ capacity: 5, refillPerSecond: 1 });

describe('createLimiter: refused options, with their messages', () => {
  const store = new MemoryStore({ autoCleanup: false });

  it('wants an options object', () => {
    const create = createLimiter as (options: unknown) => unknown;
    refuses(() => create(null), 'options', '`options` must be an object (received null)');
    refuses(() => create(undefined), 'options', '`options` must be an object (received undefined)');
    refuses(() => create('tokenBucket'), 'options', '`options` must be an object (received "tokenBucket")');
  });

  it('names a misspelled option', () => {
    const options = { policy, store, scopes: 'api' } as unknown as LimiterOptions;
    refuses(
      () => createLimiter(options),
      'scopes',
      '`scopes` is not an option of createLimiter; did you mean `scope`?',
    );
  });

  it('requires at least one policy', () => {
    const required = '`policy` is required: a policy such as tokenBucket({...}), or an array of them';
    refuses(() => createLimiter({ store } as unknown as LimiterOptions), 'policy', required);
    refuses(() => createLimiter({ policy: [], store }), 'policy', required);
  });

  it('takes only policies made by the factories, under distinct names', () => {
    const made =
      '`policy` must be created by tokenBucket(), fixedWindow(), slidingWindow(), slidingWindowCounter() or concurrency(), or be a Policy of your own';
    const fakes = [{}, { evaluate: () => ({}) }, { kind: 'token-bucket' }, null];
    for (const fake of fakes) {
      refuses(() => createLimiter({ policy: fake as unknown as AnyPolicy, store }), 'policy', made);
      refuses(() => createLimiter({ policy: [policy, fake as unknown as AnyPolicy], store }), 'policy', made);
    }
    refuses(
      () => createLimiter({ policy: [policy, tokenBucket({ capacity: 9, refillPerSecond: 3 })], store }),
      'policy',
      '`policy` names must be unique within a limiter (set `name`)',
    );
  });

  it('takes a policy of its own kind that describes itself, and names what one fails to say', () => {
    const own = leakyBucket({ capacity: 3, leak: 1, everyMs: 1_000 });
    assert.ok(createLimiter({ policy: own, store, scope: 'own-kind' }));
    const without = (key: string, value: unknown = undefined) => ({ ...own, [key]: value }) as AnyPolicy;
    const cases: [AnyPolicy, string][] = [
      [without('kind', 'leaky bucket'), '`kind` of 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"'],
      [without('args', [3, 1.5, 1_000]), '`args`, an array of integers'],
      [without('lua'), '`lua`, its Lua twin'],
      [without('stateWidth', -1), '`stateWidth`, an integer of 0 or more'],
      [without('leased'), '`leased` and `reservable`'],
      [without('reservable', 'no'), '`leased` and `reservable`'],
      [without('refund'), '`evaluate()`, `refund()` and `scale()`'],
      [without('scale'), '`evaluate()`, `refund()` and `scale()`'],
      [without('name', 'a "quoted" name'), '`name` of 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"'],
      [without('limit', 2.5), '`limit` and `windowMs`, whole numbers of 0 or more'],
      [without('windowMs'), '`limit` and `windowMs`, whole numbers of 0 or more'],
      [without('retentionMs', -2), '`retentionMs`, whole ms (-1: never at rest)'],
      [without('level', 'tides'), '`level`, one of tokens, in-flight, window-count'],
      [
        without('quotaUnit', 'requests\r\nX-Injected: 1'),
        '`quotaUnit` of 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"',
      ],
    ];
    for (const [policy, says] of cases)
      refuses(
        () => createLimiter({ policy, store }),
        'policy',
        `\`policy\` "${policy.kind}" must say ${says}`,
      );
  });

  it('takes a store with evaluate() and reset(), and not a function that has them', () => {
    const must = '`store` must implement evaluate() and reset() (a MemoryStore or RedisStore)';
    refuses(() => createLimiter({ policy, store: {} as Store }), 'store', must);
    // A class passed instead of an instance, say, with static methods of those names.
    const callable = Object.assign(() => {}, { evaluate: () => ({}), reset: () => {} });
    refuses(() => createLimiter({ policy, store: callable as unknown as Store }), 'store', must);
  });

  it('takes failOpen as a boolean only', () => {
    for (const failOpen of [true, false]) assert.ok(createLimiter({ policy, store, scope: 'fo', failOpen }));
    refuses(
      () => createLimiter({ policy, store, failOpen: 'yes' as unknown as boolean }),
      'failOpen',
      '`failOpen` must be a boolean (received "yes")',
    );
    refuses(
      () => createLimiter({ policy, store, failOpen: null as unknown as boolean }),
      'failOpen',
      '`failOpen` must be a boolean (received null)',
    );
  });

  it('names the tightest limit when the default cost is above it', () => {
    const two = [policy, fixedWindow({ limit: 2, windowMs: 1000 })];
    refuses(
      () => createLimiter({ policy: two, store, cost: 3 }),
      'cost',
      "`cost` must not exceed the policy's limit (2) (received 3)",
    );
  });
});

describe('createLimiter: the store', () => {
  it('is the one shared in-memory store when none is given', async () => {
    const policy = fixedWindow({ limit: 2, windowMs: 1000, name: 'shared-default' });
    const first = createLimiter({ policy, scope: 'limiter-options-a' });
    const second = createLimiter({ policy, scope: 'limiter-options-b' });
    assert.equal(first.store, sharedMemoryStore());
    assert.equal(second.store, first.store);
    assert.equal((await first.consume('x')).remaining, 1);
  });

  it('may leave out checkPolicies(); when present, it sees the policies once and may refuse them', () => {
    const { store } = recordingStore();
    assert.ok(createLimiter({ policy, store }));
    const seen: (readonly AnyPolicy[])[] = [];
    const checking: Store = { ...store, checkPolicies: (policies) => void seen.push(policies) };
    createLimiter({ policy, store: checking, scope: 'checked' });
    assert.deepEqual(seen, [[policy]]);
    const refusing: Store = {
      ...store,
      checkPolicies: () => {
        throw new Error('too long for this store');
      },
    };
    assert.throws(() => createLimiter({ policy, store: refusing }), /too long for this store/);
  });
});

describe('the request a limiter hands its store', () => {
  it('carries scope, encoded identifier, policies, action, cost, lease and delay, and no failOpen unless one was set', async () => {
    const { store, requests } = recordingStore();
    const limiter = createLimiter({ policy, store, scope: 'api', cost: 2 });
    await limiter.consume('user-1');
    await limiter.peek('a b', { cost: 0 });
    await limiter.consume('user-1', { cost: 5 });
    assert.deepEqual(requests, [
      {
        scope: 'api',
        id: 'user-1',
        policies: [policy],
        action: 'consume',
        cost: 2,
        lease: '',
        maxDelayMs: 0,
      },
      {
        scope: 'api',
        id: '~yGh6CKpdbtIEQyj6aml6uOltw0K',
        policies: [policy],
        action: 'peek',
        cost: 0,
        lease: '',
        maxDelayMs: 0,
      },
      {
        scope: 'api',
        id: 'user-1',
        policies: [policy],
        action: 'consume',
        cost: 5,
        lease: '',
        maxDelayMs: 0,
      },
    ]);
    // Absent rather than undefined: what `failOpen?: boolean` promises a store under exactOptionalPropertyTypes.
    assert.ok(requests.every((request) => !('failOpen' in request)));
  });

  it("passes the limiter's failOpen through, false as well as true", async () => {
    for (const failOpen of [false, true]) {
      const { store, requests } = recordingStore();
      await createLimiter({ policy, store, scope: 'api', failOpen }).consume('u');
      assert.deepEqual(requests, [
        {
          scope: 'api',
          id: 'u',
          policies: [policy],
          action: 'consume',
          cost: 1,
          lease: '',
          maxDelayMs: 0,
          failOpen,
        },
      ]);
    }
  });

  it('refuses a per-request cost that is not a non-negative integer, before the store sees it', async () => {
    const { store, requests } = recordingStore();
    const limiter = createLimiter({ policy, store, scope: 'api' });
    for (const cost of [-1, 1.5, Number.NaN]) {
      await assert.rejects(limiter.consume('u', { cost }), {
        code: 'ERR_TOLLGATE_ARGUMENT',
        message: pointed(
          `the cost must be a non-negative integer (received ${cost})`,
          'ERR_TOLLGATE_ARGUMENT',
        ),
      });
    }
    await assert.rejects(limiter.consume(''), {
      code: 'ERR_TOLLGATE_ARGUMENT',
      message: pointed('the identifier must be a non-empty string', 'ERR_TOLLGATE_ARGUMENT'),
    });
    assert.deepEqual(requests, []);
  });
});

describe("the store's answer", () => {
  const expected = {
    allowed: true,
    limit: 5,
    remaining: 4,
    resetMs: 1000,
    nowMs: 5000,
    policies: [{ ...ALLOWED, policy }],
  };

  it('may come as a promise', async () => {
    const { store } = recordingStore(async () => ({ allowed: true, results: [ALLOWED], nowMs: 5000 }));
    assert.deepEqual(await createLimiter({ policy, store, scope: 'api' }).consume('u'), expected);
  });

  it('from a synchronous store settles consume() with no extra turn of the microtask queue', async () => {
    const { store } = recordingStore();
    const limiter = createLimiter({ policy, store, scope: 'api' });
    const order: string[] = [];
    const consumed = limiter.consume('u').then((decision) => {
      assert.deepEqual(decision, expected);
      order.push('decision');
    });
    const tick = Promise.resolve().then(() => order.push('next microtask'));
    await Promise.all([consumed, tick]);
    assert.deepEqual(order, ['decision', 'next microtask']);
  });

  it("from an unreachable store follows the limiter's fail mode", async () => {
    // What RedisStore answers when it cannot reach Redis: 2500 ms is its retry hint.
    const { store } = recordingStore((request) =>
      degradedResponse(request.policies, request.failOpen ?? false, 2500, 9000),
    );
    const two = [policy, fixedWindow({ limit: 3, windowMs: 1000 })];
    const open = await createLimiter({ policy: two, store, scope: 'api', failOpen: true }).consume('u');
    const openResult = { allowed: true, remaining: 0, resetMs: 0, retryAfterMs: 0 };
    assert.deepEqual(open, {
      allowed: true,
      limit: 5,
      remaining: 0,
      resetMs: 0,
      nowMs: 9000,
      policies: [
        { ...openResult, policy: two[0] },
        { ...openResult, policy: two[1] },
      ],
      degraded: 'fail-open',
    });
    const closed = await createLimiter({ policy: two, store, scope: 'api', failOpen: false }).consume('u');
    const closedResult = { allowed: false, remaining: 0, resetMs: 0, retryAfterMs: 2500 };
    assert.deepEqual(closed, {
      allowed: false,
      limit: 5,
      remaining: 0,
      resetMs: 0,
      retryAfterMs: 2500,
      nowMs: 9000,
      policies: [
        { ...closedResult, policy: two[0] },
        { ...closedResult, policy: two[1] },
      ],
      degraded: 'fail-closed',
    });
  });

  it('degradedResponse: the fail mode for every policy, remaining 0, a retry hint only when closed', () => {
    const two = [policy, fixedWindow({ limit: 3, windowMs: 1000 })];
    const closed = { allowed: false, remaining: 0, resetMs: 0, retryAfterMs: 700 };
    assert.deepEqual(degradedResponse(two, false, 700, 42), {
      allowed: false,
      results: [closed, closed],
      nowMs: 42,
      degraded: 'fail-closed',
    });
    const open = { allowed: true, remaining: 0, resetMs: 0, retryAfterMs: 0 };
    assert.deepEqual(degradedResponse(two, true, 700, 42), {
      allowed: true,
      results: [open, open],
      nowMs: 42,
      degraded: 'fail-open',
    });
  });
});

describe('the shared default scope warning', () => {
  const limitFour = () => fixedWindow({ limit: 4, windowMs: '1m' });

  it('is given for two limiters with equal policies and no scope on one store', async () => {
    const store = new MemoryStore({ autoCleanup: false });
    const scope = createLimiter({
      policy: limitFour(),
      store: new MemoryStore({ autoCleanup: false }),
    }).scope;
    const warnings = await sharedScopeWarningsDuring(() => {
      createLimiter({ policy: limitFour(), store });
      createLimiter({ policy: limitFour(), store });
    }, scope);
    assert.equal(warnings.length, 1);
  });

  it('is not given when the scope is explicit, even the same one twice', async () => {
    const store = new MemoryStore({ autoCleanup: false });
    const warnings = await sharedScopeWarningsDuring(() => {
      createLimiter({ policy: limitFour(), store, scope: 'limiter-options' });
      createLimiter({ policy: limitFour(), store, scope: 'limiter-options' });
    }, 'limiter-options');
    assert.deepEqual(warnings, []);
  });
});
