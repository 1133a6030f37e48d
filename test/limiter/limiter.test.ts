// Limiter-level tests: createLimiter validation, consume/peek/reset, multi-policy limits, identifiers and scopes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AnyPolicy,
  createLimiter,
  fixedWindow,
  type LimiterOptions,
  MemoryStore,
  type Store,
  slidingWindow,
  slidingWindowCounter,
  TollgateError,
  tokenBucket,
} from '../../src/index.js';
import { bucketKey, bucketKeys, parseBucketKey } from '../../src/stores/key.js';
import { limitOne, liveKeys, manualStore, throwsConfig } from '../harness/policy-helpers.js';

describe('createLimiter: validation at wire-up', () => {
  it('refuses a null store rather than quietly using the shared one', () => {
    throwsConfig(
      () => createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 1 }), store: null as never }),
      'store',
    );
  });

  const store = new MemoryStore({ autoCleanup: false });
  const policy = tokenBucket({ capacity: 5, refillPerSecond: 1 });

  it('requires a policy', () => {
    throwsConfig(() => createLimiter({ store } as unknown as LimiterOptions), 'policy');
    throwsConfig(() => createLimiter({ policy: [], store }), 'policy');
    throwsConfig(() => createLimiter({ policy: {} as AnyPolicy, store }), 'policy');
    throwsConfig(() => createLimiter({ policy: [policy, null as unknown as AnyPolicy], store }), 'policy');
  });

  it('rejects a store without evaluate() and reset()', () => {
    throwsConfig(() => createLimiter({ policy, store: {} as Store }), 'store');
    throwsConfig(
      () => createLimiter({ policy, store: { evaluate: () => ({}) } as unknown as Store }),
      'store',
    );
    throwsConfig(() => createLimiter({ policy, store: { reset: () => {} } as unknown as Store }), 'store');
    throwsConfig(() => createLimiter({ policy, store: 'redis' as unknown as Store }), 'store');
  });

  it('rejects a malformed scope', () => {
    for (const scope of ['', 'a|b', '{a}', 'a b', 'x'.repeat(65), 'é', 5 as unknown as string]) {
      throwsConfig(() => createLimiter({ policy, store, scope }), 'scope');
    }
    assert.equal(createLimiter({ policy, store, scope: 'api:v1.read_write-2' }).scope, 'api:v1.read_write-2');
  });

  it('rejects a default cost above the tightest limit, or not a positive integer', () => {
    throwsConfig(() => createLimiter({ policy, store, cost: 6 }), 'cost');
    const two = [policy, fixedWindow({ limit: 2, windowMs: 1000 })];
    throwsConfig(() => createLimiter({ policy: two, store, cost: 3 }), 'cost');
    for (const cost of [0, -1, 1.5, Number.NaN])
      throwsConfig(() => createLimiter({ policy, store, cost }), 'cost');
    assert.ok(createLimiter({ policy, store, cost: 5 }));
    // A limit of 0 is a deliberate "reject everything", whatever the cost.
    assert.ok(createLimiter({ policy: fixedWindow({ limit: 0, windowMs: 1000 }), store, cost: 3 }));
  });

  it('rejects duplicate policy names', () => {
    const twice = [fixedWindow({ limit: 1, windowMs: 1000 }), fixedWindow({ limit: 5, windowMs: 60_000 })];
    throwsConfig(() => createLimiter({ policy: twice, store }), 'policy');
    const named = [
      fixedWindow({ limit: 1, windowMs: 1000, name: 'per-second' }),
      fixedWindow({ limit: 5, windowMs: 60_000, name: 'per-minute' }),
    ];
    assert.equal(createLimiter({ policy: named, store }).policies.length, 2);
  });

  it('rejects unknown options, naming the key', () => {
    throwsConfig(() => createLimiter({ policy, store, scop: 'x' } as LimiterOptions), 'scop');
    throwsConfig(() => createLimiter({ policy, store, limit: 5 } as LimiterOptions), 'limit');
    throwsConfig(() => createLimiter({ policy, store, failOpen: 'yes' as unknown as boolean }), 'failOpen');
    throwsConfig(() => createLimiter(null as unknown as LimiterOptions), 'options');
  });
});

describe('consume, peek and reset through a MemoryStore', () => {
  it('consume spends and reports the decision on the store clock', async () => {
    const { clock, store } = manualStore();
    clock.now = 1_700_000_000_000;
    const limiter = createLimiter({ policy: tokenBucket({ capacity: 5, refillPerSecond: 1 }), store });
    for (let left = 4; left >= 0; left--) {
      const d = await limiter.consume('alice');
      assert.equal(d.allowed, true);
      assert.equal(d.limit, 5);
      assert.equal(d.remaining, left);
      assert.equal(d.resetMs, (5 - left) * 1000);
      assert.equal(d.nowMs, clock.now);
      assert.equal(d.retryAfterMs, undefined);
    }
    const denied = await limiter.consume('alice');
    assert.equal(denied.allowed, false);
    assert.equal(denied.remaining, 0);
    assert.equal(denied.retryAfterMs, 1000);
    assert.equal(denied.policies.length, 1);
    assert.equal(denied.policies[0]?.policy, limiter.policies[0]);
    clock.now += 1000;
    assert.equal((await limiter.consume('alice')).allowed, true);
  });

  it('peek answers what consume would, without spending', async () => {
    const { store } = manualStore();
    const limiter = createLimiter({ policy: fixedWindow({ limit: 2, windowMs: 1000 }), store });
    const first = await limiter.peek('bob');
    assert.equal(first.allowed, true);
    assert.equal(first.remaining, 1);
    assert.equal(store.size, 0);
    assert.deepEqual(await limiter.peek('bob'), first);
    await limiter.consume('bob');
    await limiter.consume('bob');
    const exhausted = await limiter.peek('bob');
    assert.equal(exhausted.allowed, false);
    assert.equal(exhausted.retryAfterMs, 1000);
    assert.equal((await limiter.peek('bob', { cost: 3 })).retryAfterMs, undefined);
  });

  it('reset forgets one identifier in this limiter only', async () => {
    const { store } = manualStore();
    const a = createLimiter({ policy: limitOne(), store, scope: 'a' });
    const b = createLimiter({ policy: limitOne(), store, scope: 'b' });
    for (const limiter of [a, b]) {
      await limiter.consume('carol');
      await limiter.consume('dave');
    }
    await a.reset('carol');
    assert.equal((await a.consume('carol')).allowed, true);
    assert.equal((await a.consume('dave')).allowed, false);
    assert.equal((await b.consume('carol')).allowed, false);
  });

  it('a per-call cost above the limit is denied with no retry hint; a bad cost or identifier rejects', async () => {
    const { store } = manualStore();
    const limiter = createLimiter({ policy: slidingWindow({ limit: 5, windowMs: 1000 }), store });
    const d = await limiter.consume('erin', { cost: 6 });
    assert.equal(d.allowed, false);
    assert.equal('retryAfterMs' in d, false);
    assert.equal(store.size, 0);
    assert.equal((await limiter.consume('erin', { cost: 0 })).allowed, true);
    const argument = (error: unknown) =>
      error instanceof TollgateError && error.code === 'ERR_TOLLGATE_ARGUMENT';
    await assert.rejects(limiter.consume('erin', { cost: -1 }), argument);
    await assert.rejects(limiter.consume('erin', { cost: 1.5 }), argument);
    await assert.rejects(limiter.consume(''), argument);
    await assert.rejects(limiter.consume(undefined as unknown as string), argument);
  });

  it('a limit of 0 rejects everything with no retry hint', async () => {
    const { store } = manualStore();
    for (const policy of [
      tokenBucket({ requestsPerMinute: 0 }),
      slidingWindowCounter({ limit: 0, windowMs: 10 }),
    ]) {
      const d = await createLimiter({ policy, store }).consume('frank');
      assert.equal(d.allowed, false);
      assert.equal(d.retryAfterMs, undefined);
    }
  });
});

describe('a multi-policy limiter (burst + sustained) is all or nothing', () => {
  const policies = () => [
    tokenBucket({ capacity: 3, refillPerSecond: 1, name: 'burst' }),
    fixedWindow({ limit: 5, windowMs: '1m', name: 'sustained' }),
  ];

  it('a denial by one policy spends from none', async () => {
    const { clock, store } = manualStore();
    const limiter = createLimiter({ policy: policies(), store });
    for (let i = 0; i < 3; i++) assert.equal((await limiter.consume('gina')).allowed, true);
    const burstDenied = await limiter.consume('gina');
    assert.equal(burstDenied.allowed, false);
    assert.equal(burstDenied.limit, 3);
    assert.equal(burstDenied.retryAfterMs, 1000);
    // The sustained window was not charged for the denied request: 2 of 5 left.
    assert.equal(burstDenied.policies[1]?.remaining, 2);
    clock.now = 1000;
    assert.equal((await limiter.consume('gina')).remaining, 0);
    clock.now = 2000;
    const last = await limiter.consume('gina');
    assert.equal(last.allowed, true);
    assert.equal(last.remaining, 0);
    assert.deepEqual(
      last.policies.map((p) => p.remaining),
      [0, 0],
    );
    clock.now = 5000;
    for (let i = 0; i < 10; i++) {
      const d = await limiter.consume('gina');
      assert.equal(d.allowed, false);
      assert.equal(d.limit, 5);
      assert.equal(d.retryAfterMs, 55_000);
      // The bucket was not charged either: 3 s of refill after 2000, as many tokens as before the attempts.
      assert.equal(d.policies[0]?.remaining, 3);
    }
    clock.now = 60_000;
    for (let i = 0; i < 3; i++) assert.equal((await limiter.consume('gina')).allowed, true);
  });

  it('keys of a multi-policy limiter share one hash tag per identifier', async () => {
    const { store } = manualStore();
    const limiter = createLimiter({ policy: policies(), store, scope: 'multi' });
    await limiter.consume('{x}|y');
    const keys = await liveKeys(store);
    assert.equal(keys.length, 2);
    const tags = keys.map((key) => /^\{([^{}]+)\}:(burst|sustained)$/.exec(key)?.[1]);
    assert.ok(tags[0] !== undefined && tags[0] === tags[1], keys.join(' '));
  });
});

describe('identifiers and scopes', () => {
  const identifiers = [
    'a',
    'b',
    'a|b',
    'multi|a',
    '|',
    '{a}',
    '{',
    '}',
    'a}',
    '{a',
    'a b',
    ' a',
    'a ',
    '  ',
    'ünïcödé',
    'unicode',
    '🙂',
    '日本語',
    '\u0000',
    '\n',
    '~',
    '~a',
    'a:b',
    'a/b+c=d@e',
    'x'.repeat(64),
    'x'.repeat(65),
    'x'.repeat(10_240),
    `${'x'.repeat(10_239)}y`,
    `y${'x'.repeat(10_239)}`,
  ];

  it('any identifier is accepted, keys stay short and free of separators, and no two collide', async () => {
    const { store } = manualStore();
    const limiter = createLimiter({ policy: limitOne(), store, scope: 'ids' });
    for (const id of identifiers) assert.equal((await limiter.consume(id)).allowed, true, JSON.stringify(id));
    for (const id of identifiers)
      assert.equal((await limiter.consume(id)).allowed, false, JSON.stringify(id));
    const keys = await liveKeys(store);
    assert.equal(new Set(keys).size, identifiers.length);
    for (const key of keys) {
      assert.equal(key.split('|').length, 2, key);
      assert.ok(!/[{}\s]/.test(key), key);
      assert.ok(key.length <= 'ids|'.length + 64, key);
    }
  });

  it('the same identifiers never collide in a multi-policy limiter either', async () => {
    const { store } = manualStore();
    const policy = [limitOne(), tokenBucket({ capacity: 1, refillPerSecond: 0, name: 'once' })];
    const limiter = createLimiter({ policy, store, scope: 'multi' });
    for (const id of identifiers) assert.equal((await limiter.consume(id)).allowed, true, JSON.stringify(id));
    assert.equal(new Set(await liveKeys(store)).size, 2 * identifiers.length);
  });

  it('every listed key reads back to its scope, identifier and policy, and resets its bucket alone', async () => {
    const { store } = manualStore();
    const policy = [limitOne(), tokenBucket({ capacity: 1, refillPerSecond: 0, name: 'once' })];
    const limiter = createLimiter({ policy, store, scope: 'multi' });
    for (const id of identifiers) await limiter.consume(id);
    const keys = await liveKeys(store);
    for (const key of keys) {
      const parsed = parseBucketKey(key);
      assert.ok(parsed !== undefined, key);
      assert.equal(bucketKey(parsed.scope, parsed.identifier, parsed.member), key);
      assert.equal(parsed.scope, 'multi');
    }
    for (const id of identifiers) {
      const [first, second] = bucketKeys('multi', id, limiter.policies);
      assert.ok(first !== undefined && keys.includes(first) && second !== undefined && keys.includes(second));
      store.reset([first]);
      const decision = await limiter.consume(id);
      assert.equal(decision.allowed, false, `${JSON.stringify(id)}: 'once' was not reset`);
      assert.equal(decision.policies[0]?.remaining, 1, `${JSON.stringify(id)}: the fixed window was`);
    }
    for (const foreign of ['', 'multi', 'multi|', '|a', '{multi|a', '{multi|a}', '{multi|a}:', '{multi|a}x'])
      assert.equal(parseBucketKey(foreign), undefined, foreign);
  });

  it('distinct scopes never share buckets', async () => {
    const { store } = manualStore();
    const scopes = ['a', 'b', 'a:b', 'a.b', 'A'];
    const limiters = scopes.map((scope) => createLimiter({ policy: limitOne(), store, scope }));
    for (const limiter of limiters) assert.equal((await limiter.consume('b:c')).allowed, true, limiter.scope);
    // Scope 'a' with identifier 'b:c' is not scope 'a:b' with identifier 'c'.
    assert.equal((await limiters[2]?.consume('c'))?.allowed, true);
    for (const limiter of limiters)
      assert.equal((await limiter.consume('b:c')).allowed, false, limiter.scope);
  });

  it('the default scope differs when the parameters differ, and is shared when they are equal', async () => {
    const { store } = manualStore();
    const one = createLimiter({ policy: fixedWindow({ limit: 1, windowMs: 1000 }), store });
    const same = createLimiter({ policy: fixedWindow({ limit: 1, windowMs: 1000 }), store });
    const other = createLimiter({ policy: fixedWindow({ limit: 1, windowMs: 1001 }), store });
    const kind = createLimiter({ policy: slidingWindow({ limit: 1, windowMs: 1000 }), store });
    assert.equal(one.scope, same.scope);
    assert.notEqual(one.scope, other.scope);
    assert.notEqual(one.scope, kind.scope);
    await one.consume('hal');
    assert.equal((await same.consume('hal')).allowed, false);
    assert.equal((await other.consume('hal')).allowed, true);
    assert.equal((await kind.consume('hal')).allowed, true);
  });
});
