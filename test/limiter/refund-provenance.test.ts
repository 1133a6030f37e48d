// A refund that names its admission gives back at most what that admission spent, once, to the key and limiter
// that spent it; a refund that names none gives back what it is told (a trusted caller's tool).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createLimiter,
  type Decision,
  fixedWindow,
  type Limiter,
  type TollgateError,
  tokenBucket,
} from '../../src/index.js';
import { manualStore } from '../harness/policy-helpers.js';

/** Five tokens, one back per minute: a refund's tokens are all that can change the count in a test. */
const bucket = () => tokenBucket({ capacity: 5, refillPerSecond: 1 / 60 });

async function left(limiter: Limiter, identifier = 'client'): Promise<number> {
  return (await limiter.peek(identifier, { cost: 0 })).remaining;
}

async function refused(promise: Promise<void>, message: string): Promise<void> {
  await assert.rejects(promise, (error: TollgateError) => {
    assert.equal(error.code, 'ERR_TOLLGATE_ARGUMENT');
    assert.ok(error.message.includes(message), error.message);
    return true;
  });
}

describe('refund({ spent }): at most what the admission spent, once', () => {
  it('gives a spend back once: a second refund of it is refused and mints nothing', async () => {
    const limiter = createLimiter({ policy: bucket(), store: manualStore().store });
    const spent = await limiter.consume('client');
    assert.equal(await left(limiter), 4);
    await limiter.refund('client', { spent });
    assert.equal(await left(limiter), 5);
    await limiter.consume('client', { cost: 3 });
    await refused(limiter.refund('client', { spent }), 'refunded already');
    assert.equal(await left(limiter), 2, 'the second refund gave nothing back');
  });

  it('gives back what the admission spent by default, and refuses more', async () => {
    const limiter = createLimiter({ policy: bucket(), store: manualStore().store, cost: 1 });
    await limiter.consume('client', { cost: 3 });
    const spent = await limiter.consume('client', { cost: 2 });
    assert.equal(await left(limiter), 0);
    await refused(limiter.refund('client', { spent, cost: 3 }), 'must not exceed what `spent` spent (2)');
    assert.equal(await left(limiter), 0);
    await limiter.refund('client', { spent });
    assert.equal(await left(limiter), 2, 'its own 2, not the default cost of 1');
  });

  it('may give back part of the spend, once', async () => {
    const limiter = createLimiter({ policy: bucket(), store: manualStore().store });
    const spent = await limiter.consume('client', { cost: 3 });
    await limiter.refund('client', { spent, cost: 1 });
    assert.equal(await left(limiter), 3);
    await refused(limiter.refund('client', { spent, cost: 1 }), 'refunded already');
  });

  it("refuses another identifier's admission", async () => {
    const limiter = createLimiter({ policy: bucket(), store: manualStore().store });
    await limiter.consume('victim', { cost: 5 });
    const spent = await limiter.consume('attacker');
    await refused(limiter.refund('victim', { spent }), 'another identifier than "victim"');
    assert.equal(await left(limiter, 'victim'), 0);
  });

  it("refuses another limiter's admission, even on the same store and scope", async () => {
    const { store } = manualStore();
    const one = createLimiter({ policy: bucket(), store, scope: 'shared' });
    const other = createLimiter({ policy: bucket(), store, scope: 'shared' });
    await one.consume('client', { cost: 4 });
    const spent = await other.consume('client');
    await refused(one.refund('client', { spent }), 'an admission this limiter returned');
    assert.equal(await left(one), 0);
  });

  it('refuses a copy, a denial copied as an admission, and a decision edited in place', async () => {
    const limiter = createLimiter({ policy: bucket(), store: manualStore().store });
    const spent = await limiter.consume('client', { cost: 5 });
    const denied = await limiter.consume('client');
    assert.equal(denied.allowed, false);
    const copies: Decision[] = [
      { ...spent },
      { ...denied, allowed: true },
      JSON.parse(JSON.stringify(spent)) as Decision,
    ];
    for (const copy of copies)
      await refused(limiter.refund('client', { spent: copy }), 'an admission this limiter returned');
    await refused(limiter.refund('client', { spent: denied }), 'an admission this limiter returned');
    const moved = spent as { nowMs: number };
    moved.nowMs += 60_000;
    await refused(limiter.refund('client', { spent }), 'changed after the limiter returned it');
    moved.nowMs -= 60_000;
    (spent.policies[0] as { resetMs: number }).resetMs += 1;
    await refused(limiter.refund('client', { spent }), 'changed after the limiter returned it');
    assert.equal(await left(limiter), 0, 'no refused refund gave anything back');
  });

  it('refuses a peek, alone or beside another policy: it spent nothing', async () => {
    const { store } = manualStore();
    for (const policy of [bucket(), [bucket(), fixedWindow({ limit: 3, windowMs: 60_000 })]]) {
      const limiter = createLimiter({ policy, store });
      const look = await limiter.peek('client');
      assert.equal(look.allowed, true);
      await refused(limiter.refund('client', { spent: look }), 'an admission this limiter returned');
    }
  });

  it('refuses what is no decision at all', async () => {
    const limiter = createLimiter({ policy: bucket(), store: manualStore().store });
    for (const spent of [null, 'a decision', 42, true])
      await refused(
        limiter.refund('client', { spent: spent as never }),
        'an admission this limiter returned',
      );
  });

  it('names the admission of a limiter with several policies, or a wait, as well', async () => {
    const { store } = manualStore();
    const limiter = createLimiter({ policy: [bucket(), fixedWindow({ limit: 3, windowMs: 60_000 })], store });
    const spent = await limiter.consume('client', { cost: 2 });
    await limiter.refund('client', { spent });
    await refused(limiter.refund('client', { spent }), 'refunded already');
    const waited = await limiter.wait('client', { cost: 3 });
    await limiter.refund('client', { spent: waited });
    assert.equal(await left(limiter), 3);
  });

  it('may be asked again when the store did not apply it', async () => {
    const { store } = manualStore();
    let down = false;
    const flaky = {
      ...store,
      synchronous: true as const,
      evaluate: (request: Parameters<typeof store.evaluate>[0]) => {
        if (down) throw new Error('store down');
        return store.evaluate(request);
      },
      reset: (keys: readonly string[]) => store.reset(keys),
    };
    const limiter = createLimiter({ policy: bucket(), store: flaky });
    const spent = await limiter.consume('client');
    down = true;
    await assert.rejects(limiter.refund('client', { spent }), /store down/);
    down = false;
    await limiter.refund('client', { spent });
    assert.equal(await left(limiter), 5);
  });
});

describe('refund() without a spend: what it is told', () => {
  it('gives back `cost` units, up to a full quota: a trusted caller decides', async () => {
    const limiter = createLimiter({ policy: bucket(), store: manualStore().store });
    await limiter.consume('client', { cost: 5 });
    await limiter.refund('client', { cost: 3 });
    assert.equal(await left(limiter), 3);
    await limiter.refund('client', { cost: 5 });
    assert.equal(await left(limiter), 5);
  });
});
