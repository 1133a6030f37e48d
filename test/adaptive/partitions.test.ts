// Unit tests of an adaptive limit's partitions: their shares, guarantees, what they may borrow, and the total bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adaptiveConcurrency } from '../../src/adaptive/adaptive-concurrency.js';
import {
  ACTIVE_MS,
  guaranteed,
  mayAdmit,
  type Partition,
  partitionsOf,
  UNNAMED,
} from '../../src/adaptive/partitions.js';
import { mulberry32 } from '../../src/core/seeded-random.js';
import type { LocalSlot } from '../../src/policies/local-policy.js';
import { pointed } from '../harness/error-pointer.js';
import { ManualClock, StubAlgorithm } from './stub-algorithm.js';

function refuses(shares: unknown, option: string, message: string): void {
  assert.throws(() => partitionsOf(shares as Record<string, number>), {
    name: 'TollgateError',
    code: 'ERR_TOLLGATE_CONFIG',
    option,
    message: pointed(message),
  });
}

/** Partitions of `shares` with `inFlight` held in each and each seen at `seenAt` (default: never). */
function holding(
  shares: Record<string, number>,
  inFlight: Record<string, number>,
  seenAt: Record<string, number> = {},
): Map<string, Partition> {
  const partitions = partitionsOf(shares);
  for (const [name, count] of Object.entries(inFlight)) (partitions.get(name) as Partition).inFlight = count;
  for (const [name, at] of Object.entries(seenAt)) (partitions.get(name) as Partition).seenAt = at;
  return partitions;
}

/** Whether `name` may take a slot of `limit`, the total being what the partitions hold. */
function may(partitions: Map<string, Partition>, name: string, limit: number, nowMs = 0): boolean {
  const total = [...partitions.values()].reduce((sum, p) => sum + p.inFlight, 0);
  return mayAdmit(partitions.get(name) as Partition, partitions, limit, total, nowMs);
}

const NAMES = 'names must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-"';
const SHARE = 'must be a share above 0 and at most 1';

describe('partitions: shares', () => {
  it('refuses what is not an object of shares', () => {
    const shape = 'must be an object of partition names to shares, such as { live: 0.9, batch: 0.1 }';
    refuses(null, 'partitions', `\`partitions\` ${shape} (received null)`);
    refuses([0.5], 'partitions', `\`partitions\` ${shape} (received an array)`);
    refuses('live', 'partitions', `\`partitions\` ${shape} (received "live")`);
  });

  it('refuses a partition name outside the policy name rule, the unnamed one included', () => {
    refuses({ 'two words': 0.5 }, 'partitions', `\`partitions\` ${NAMES} (received "two words")`);
    refuses({ '': 0.5 }, 'partitions', `\`partitions\` ${NAMES} (received "")`);
    const long = 'a'.repeat(65);
    refuses({ [long]: 0.5 }, 'partitions', `\`partitions\` ${NAMES} (received "${long}")`);
    assert.ok(partitionsOf({ ['a'.repeat(64)]: 0.5, 'x.y_z-1': 0.5 }).has('x.y_z-1'));
  });

  it('refuses a share not above 0 and at most 1, naming the partition', () => {
    for (const [share, shown] of [
      [0, '0'],
      [-0.1, '-0.1'],
      [1.000001, '1.000001'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      ['0.5', '"0.5"'],
    ] as const)
      refuses({ live: share }, 'partitions.live', `\`partitions.live\` ${SHARE} (received ${shown})`);
    assert.equal(partitionsOf({ live: 1 }).get('live')?.share, 1);
    assert.equal(partitionsOf({ live: Number.MIN_VALUE }).get('live')?.share, Number.MIN_VALUE);
  });

  it('refuses shares adding up to more than 1, beyond binary rounding', () => {
    refuses(
      { live: 0.5, batch: 0.75 },
      'partitions',
      '`partitions` shares must add up to at most 1 (they add up to 1.25)',
    );
    refuses(
      { live: 1, batch: 2e-9 },
      'partitions',
      '`partitions` shares must add up to at most 1 (they add up to 1.000000002)',
    );
    // 1.0000000000000002 in binary, and exactly the tolerance: both 1 as written.
    assert.equal(partitionsOf({ a: 0.33, b: 0.56, c: 0.11 }).size, 4);
    assert.equal(partitionsOf({ a: 1, b: 1e-9 }).size, 3);
  });

  it('keeps the configured partitions in order, then the unnamed one, each counting from nothing', () => {
    assert.deepEqual(
      [...partitionsOf({ live: 0.9, batch: 0.1 }).values()],
      [
        { name: 'live', share: 0.9, inFlight: 0, completed: 0, rejected: 0, dropped: 0, seenAt: -Infinity },
        { name: 'batch', share: 0.1, inFlight: 0, completed: 0, rejected: 0, dropped: 0, seenAt: -Infinity },
        { name: '', share: 0, inFlight: 0, completed: 0, rejected: 0, dropped: 0, seenAt: -Infinity },
      ],
    );
    assert.deepEqual([...partitionsOf(undefined).keys()], [UNNAMED]);
    assert.deepEqual([...partitionsOf({}).keys()], [UNNAMED]);
  });
});

describe('partitions: guarantees and borrowing', () => {
  it('guarantees each partition its share of the limit, rounded down', () => {
    const [live, batch, none] = [...partitionsOf({ live: 0.75, batch: 0.25 }).values()] as Partition[];
    assert.deepEqual(
      [10, 4, 3, 1].map((limit) => [
        guaranteed(live as Partition, limit),
        guaranteed(batch as Partition, limit),
      ]),
      [
        [7, 2],
        [3, 1],
        [2, 0],
        [0, 0],
      ],
    );
    assert.equal(guaranteed(none as Partition, 100), 0);
    assert.equal(guaranteed(partitionsOf({ all: 1 }).get('all') as Partition, 9), 9);
  });

  it('never admits past the limit, even within a guarantee', () => {
    const partitions = holding({ live: 0.5 }, { '': 4 });
    assert.equal(may(partitions, 'live', 4), false);
    assert.equal(may(partitions, 'live', 5), true);
  });

  it('admits within a guarantee however much the others wait for theirs', () => {
    const partitions = holding({ live: 0.5, batch: 0.5 }, { live: 4 }, { batch: 0 });
    assert.equal(may(partitions, 'live', 10), true);
    assert.equal(may(partitions, 'batch', 10), true);
  });

  it('lends beyond a guarantee only what active partitions leave of theirs unused', () => {
    // batch guarantees 3 and asked a moment ago: live may borrow the 2 left beyond both guarantees, no more.
    const shares = { live: 0.5, batch: 0.3 };
    assert.equal(may(holding(shares, { live: 5 }, { batch: 0 }), 'live', 10), true);
    assert.equal(may(holding(shares, { live: 6 }, { batch: 0 }), 'live', 10), true);
    assert.equal(may(holding(shares, { live: 7 }, { batch: 0 }), 'live', 10), false);
    // What batch holds of its guarantee is not lent either way.
    assert.equal(may(holding(shares, { live: 7, batch: 1 }), 'live', 10), false);
    assert.equal(may(holding(shares, { live: 6, batch: 1 }), 'live', 10), true);
  });

  it('lends an idle partition guarantee once it has not asked for ACTIVE_MS', () => {
    const shares = { live: 0.5, batch: 0.5 };
    assert.equal(ACTIVE_MS, 1000);
    assert.equal(may(holding(shares, { live: 5 }, { batch: 0 }), 'live', 10, ACTIVE_MS - 1), false);
    assert.equal(may(holding(shares, { live: 5 }, { batch: 0 }), 'live', 10, ACTIVE_MS), true);
    assert.equal(may(holding(shares, { live: 5 }), 'live', 10, 0), true);
    // A partition holding slots is active however long ago it asked.
    assert.equal(may(holding(shares, { live: 5, batch: 2 }), 'live', 10, 5000), false);
    assert.equal(may(holding(shares, { live: 5, batch: 2 }), '', 10, 5000), false);
  });

  it('counts nothing for a partition beyond its guarantee, so it frees no other guarantee', () => {
    // batch borrowed 2 beyond its 3; live still has 1 of its 5 unused, which the unnamed may not take.
    const partitions = holding({ live: 0.5, batch: 0.3 }, { live: 4, batch: 5 });
    assert.equal(may(partitions, '', 10), false);
    assert.equal(may(holding({ live: 0.5, batch: 0.3 }, { live: 4, batch: 4 }), '', 10), true);
  });
});

describe('partitions: through the limit', () => {
  it('counts an unknown partition, or none, as the unnamed one with no share', () => {
    const algorithm = new StubAlgorithm(2);
    const policy = adaptiveConcurrency({ algorithm, partitions: { live: 0.5 }, clock: () => 0 });
    const counts = () =>
      policy
        .stats()
        .partitions.map(({ name, inFlight, completed, rejected }) => [name, inFlight, completed, rejected]);
    const unknown = policy.admit('nope');
    const none = policy.admit(undefined);
    assert.equal(unknown.result.allowed, true);
    assert.equal(none.result.allowed, true);
    assert.equal(policy.admit('').result.allowed, false);
    assert.deepEqual(counts(), [
      ['live', 0, 0, 0],
      ['', 2, 0, 1],
    ]);
    unknown.slot?.release();
    none.slot?.release();
    assert.deepEqual(counts(), [
      ['live', 0, 0, 0],
      ['', 0, 2, 1],
    ]);
  });

  it('keeps an active partition guarantee from a borrower until it has been idle for ACTIVE_MS', () => {
    const algorithm = new StubAlgorithm(4);
    const clock = new ManualClock();
    const policy = adaptiveConcurrency({
      algorithm,
      partitions: { live: 0.5, batch: 0.5 },
      clock: clock.read,
    });
    (policy.admit('live').slot as LocalSlot).release();
    const batch = [1, 2].map(() => policy.admit('batch'));
    clock.nowMs = ACTIVE_MS - 1;
    batch.push(policy.admit('batch'));
    clock.nowMs = ACTIVE_MS;
    batch.push(policy.admit('batch'), policy.admit('batch'));
    assert.deepEqual(
      batch.map(({ result }) => result.allowed),
      [true, true, false, true, true],
    );
    // A denied request still marks its partition active: its guarantee comes back first as slots free.
    assert.equal(policy.admit('live').result.allowed, false);
    batch[0]?.slot?.release();
    assert.equal(policy.peek('batch').allowed, false);
    assert.equal(policy.admit('batch').result.allowed, false);
    assert.equal(policy.admit('live').result.allowed, true);
  });

  it('does not mark a partition active by a peek', () => {
    const algorithm = new StubAlgorithm(2);
    const clock = new ManualClock();
    const policy = adaptiveConcurrency({
      algorithm,
      partitions: { live: 0.5, batch: 0.5 },
      clock: clock.read,
    });
    clock.nowMs = 5000;
    policy.peek('live');
    assert.equal(policy.admit('batch').result.allowed, true);
    assert.equal(policy.admit('batch').result.allowed, true);
  });

  it('holds the total under the limit and admits exactly as the guarantees say, over random traffic', () => {
    const random = mulberry32(20_261_203);
    const shares: Record<string, number> = { a: 0.5, b: 0.3, c: 0.1 };
    const algorithm = new StubAlgorithm(8);
    const clock = new ManualClock();
    const policy = adaptiveConcurrency({ algorithm, partitions: shares, clock: clock.read });
    const held: { readonly name: string; readonly slot: LocalSlot }[] = [];
    const seenAt = new Map<string, number>();
    const asked = ['a', 'b', 'c', undefined, 'zzz'];
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    // Releases by partition: what each has completed (a cancel completes nothing).
    const completed = new Map<string, number>();
    let admitted = 0;
    let cancelled = 0;
    for (let step = 0; step < 5000; step++) {
      const roll = random();
      if (roll < 0.5) {
        const partition = pick(asked);
        const name = partition !== undefined && partition in shares ? partition : '';
        const expected = modelMayAdmit(name, held, seenAt, shares, algorithm.limit, clock.nowMs);
        seenAt.set(name, clock.nowMs);
        const { result, slot } = policy.admit(partition);
        assert.equal(result.allowed, expected, `step ${step}: ${name} at ${held.length}/${algorithm.limit}`);
        if (slot !== undefined) held.push({ name, slot });
        if (slot !== undefined) admitted++;
        if (slot !== undefined) assert.ok(held.length <= algorithm.limit, `step ${step}: over the limit`);
      } else if (roll < 0.85 && held.length > 0) {
        const taken = held.splice(Math.floor(random() * held.length), 1)[0] as (typeof held)[number];
        if (random() < 0.8) {
          taken.slot.release({ status: 200 });
          completed.set(taken.name, (completed.get(taken.name) ?? 0) + 1);
        } else {
          taken.slot.cancel();
          cancelled++;
        }
      } else if (roll < 0.95) clock.advance(Math.floor(random() * 600));
      else algorithm.limit = 1 + Math.floor(random() * 12);
      assert.equal(policy.inFlight, held.length);
      const counts = policy.stats().partitions;
      for (const { name, inFlight, completed: done } of counts) {
        assert.equal(inFlight, held.filter((h) => h.name === name).length, `step ${step}: ${name} in flight`);
        assert.equal(done, completed.get(name) ?? 0, `step ${step}: ${name} completed`);
      }
    }
    assert.ok(admitted > 1000, `admitted ${admitted}`);
    assert.ok(cancelled > 100 && (completed.get('a') ?? 0) > 100, `cancelled ${cancelled}`);
  });
});

/** The rule as documented, apart from the code: the limit, then the guarantee, then others' unused guarantees. */
function modelMayAdmit(
  name: string,
  held: readonly { readonly name: string }[],
  seenAt: ReadonlyMap<string, number>,
  shares: Readonly<Record<string, number>>,
  limit: number,
  nowMs: number,
): boolean {
  const holding = (of: string) => held.filter((h) => h.name === of).length;
  const guarantee = (of: string) => Math.floor(limit * (shares[of] ?? 0));
  if (held.length >= limit) return false;
  if (holding(name) < guarantee(name)) return true;
  let reserved = 0;
  for (const other of [...Object.keys(shares), '']) {
    const idle = holding(other) === 0 && nowMs - (seenAt.get(other) ?? Number.NEGATIVE_INFINITY) >= ACTIVE_MS;
    if (other !== name && !idle) reserved += Math.max(0, guarantee(other) - holding(other));
  }
  return limit - held.length > reserved;
}
