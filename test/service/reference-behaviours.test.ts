// envoyproxy/ratelimit's documented behaviours, end to end: the service started for real, asked over gRPC by a
// protobufjs client built from the shipped proto files, on a MemoryStore whose clock the test moves.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Code, createRateLimitService, type RateLimitService, Unit } from '../../src/service/index.js';
import type { RateLimitRequest, RateLimitResponse } from '../../src/service/protocol/messages.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { TestClock } from '../../src/testing/test-clock.js';
import { call, fromProtoResponse, protoRequest, rlsClient } from './grpc/grpc-fixture.js';

const LIMITS = `domain: edge
descriptors:
  - key: client
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: path
    value: /login
    rate_limit: { name: login, unit: minute, requests_per_unit: 1, replaces: [{ name: per-route }] }
  - key: route
    rate_limit: { name: per-route, unit: minute, requests_per_unit: 5 }
  - key: tier
    value: free
    descriptors:
      - key: user
        rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: tier
    value: paid
    rate_limit: { unit: hour, requests_per_unit: 100 }
  - key: internal
    rate_limit: { unlimited: true }
  - key: banned
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: trial
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: file
    value: reports/*
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: file
    value: shared/*
    share_threshold: true
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: file
    value: reports/annual
    rate_limit: { unit: minute, requests_per_unit: 9 }
  - key: model
    quota_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: tokens
    tollgate:
      policies:
        - token_bucket: { capacity: 10, refill_per_second: 1 }
`;

/** 12:00:00.000 UTC of a day: every minute window starts here. */
const NOON = Date.UTC(2026, 11, 3, 12);

let dir: string;
let service: RateLimitService;
let client: ReturnType<typeof rlsClient>;
const clock = new TestClock();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-reference-'));
  writeFileSync(join(dir, 'limits.yaml'), LIMITS);
  clock.now = NOON;
  service = await createRateLimitService({
    config: dir,
    store: new MemoryStore({ clock: clock.read }),
    grpc: { host: '127.0.0.1', port: 0 },
    http: false,
    watch: false,
    logger: { info() {}, warn() {}, error() {} },
  });
  client = rlsClient(service.grpcPort as number);
});

after(async () => {
  client.close();
  await service.close(1000);
  rmSync(dir, { recursive: true, force: true });
});

type Descriptor = { entries: string[]; hits?: number };

/** One call: each descriptor as `key=value` entries (and its own hits), in the domain `edge` unless told. */
async function ask(descriptors: Descriptor[], domain = 'edge', hitsAddend = 0): Promise<RateLimitResponse> {
  const request: RateLimitRequest = {
    domain,
    hitsAddend,
    descriptors: descriptors.map(({ entries, hits }) => ({
      entries: entries.map((entry) => {
        const [key, value] = entry.split('=') as [string, string];
        return { key, value };
      }),
      ...(hits === undefined ? {} : { hitsAddend: hits }),
    })),
  };
  return fromProtoResponse((await call(client, 'ShouldRateLimit', protoRequest(request))) as object);
}

const one = (...entries: string[]) => ask([{ entries }]);
const codes = (response: RateLimitResponse) => response.statuses.map((status) => status.code);

describe('the reference behaviours over gRPC', () => {
  it('counts to the limit and over, with the remaining and the time to the window end', async () => {
    clock.now = NOON + 15_300;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await one('client=a'));
    assert.deepEqual(
      answers.map((a) => [a.overallCode, a.statuses[0]?.limitRemaining]),
      [
        [Code.OK, 2],
        [Code.OK, 1],
        [Code.OK, 0],
        [Code.OVER_LIMIT, 0],
      ],
    );
    const status = answers[3]?.statuses[0];
    assert.deepEqual(status?.currentLimit, { name: '', requestsPerUnit: 3, unit: Unit.MINUTE });
    assert.equal(status?.durationUntilResetMs, 45_000, 'until the clock minute ends, in whole seconds up');
    clock.now = NOON + 60_000;
    assert.equal((await one('client=a')).overallCode, Code.OK, 'a new minute, a new window');
  });

  it('answers several descriptors in order, over when any is over, each counted on its own', async () => {
    clock.now = NOON + 120_000;
    await ask([{ entries: ['client=b'], hits: 3 }]);
    const both = await ask([{ entries: ['tier=paid'] }, { entries: ['client=b'] }]);
    assert.equal(both.overallCode, Code.OVER_LIMIT);
    assert.deepEqual(codes(both), [Code.OK, Code.OVER_LIMIT]);
    assert.equal(both.statuses[0]?.limitRemaining, 99);
    assert.equal((await one('tier=paid')).statuses[0]?.limitRemaining, 98, 'the first was counted');
  });

  it('answers an unknown domain and an unknown descriptor OK, with no limit', async () => {
    for (const answer of [await ask([{ entries: ['client=x'] }], 'elsewhere'), await one('nothing=here')]) {
      assert.equal(answer.overallCode, Code.OK);
      assert.equal(answer.statuses[0]?.currentLimit, undefined);
    }
  });

  it('takes the most specific match: the exact value, then a wildcard, then the key alone', async () => {
    assert.equal((await one('file=reports/annual')).statuses[0]?.currentLimit?.requestsPerUnit, 9);
    assert.equal((await one('file=reports/q1')).statuses[0]?.currentLimit?.requestsPerUnit, 2);
    assert.equal((await one('tier=paid')).statuses[0]?.currentLimit?.requestsPerUnit, 100);
    assert.equal((await one('tier=gold')).statuses[0]?.currentLimit, undefined, 'tier has no default');
  });

  it('applies a limit only at the depth it is configured for', async () => {
    assert.equal((await one('tier=free')).statuses[0]?.currentLimit, undefined, 'too short');
    assert.equal((await one('tier=free', 'user=u1')).statuses[0]?.currentLimit?.requestsPerUnit, 2);
    const longer = await one('tier=free', 'user=u1', 'extra=1');
    assert.equal(longer.statuses[0]?.currentLimit, undefined, 'too long');
    assert.equal((await one('tier=paid', 'user=u1')).statuses[0]?.currentLimit, undefined);
  });

  it('answers an unlimited descriptor OK with the greatest remaining, and bans with a limit of 0', async () => {
    const unlimited = await one('internal=jobs');
    assert.deepEqual(unlimited.statuses[0], { code: Code.OK, limitRemaining: 4_294_967_295 });
    const banned = await one('banned=x');
    assert.equal(banned.overallCode, Code.OVER_LIMIT);
    assert.equal(banned.statuses[0]?.limitRemaining, 0);
  });

  it('counts a shadow-mode limit but answers OK past it', async () => {
    clock.now = NOON + 180_000;
    assert.equal((await one('trial=t')).statuses[0]?.limitRemaining, 0);
    const past = await one('trial=t');
    assert.equal(past.overallCode, Code.OK);
    assert.deepEqual(codes(past), [Code.OK]);
    assert.equal(past.statuses[0]?.limitRemaining, 0);
  });

  it('lifts the limits another matched limit replaces, without counting them', async () => {
    clock.now = NOON + 240_000;
    const replaced = await ask([{ entries: ['route=/login'] }, { entries: ['path=/login'] }]);
    assert.deepEqual(replaced.statuses[0], { code: Code.OK, limitRemaining: 0 });
    assert.equal(replaced.statuses[1]?.currentLimit?.name, 'login');
    assert.equal(
      (await one('route=/login')).statuses[0]?.limitRemaining,
      4,
      'the replaced one counted nothing',
    );
  });

  it('counts each value of a wildcard apart, and every value alike past share_threshold', async () => {
    clock.now = NOON + 300_000;
    await one('file=reports/a');
    await one('file=reports/a');
    assert.equal((await one('file=reports/a')).overallCode, Code.OVER_LIMIT);
    assert.equal((await one('file=reports/b')).overallCode, Code.OK, 'another value, another counter');
    await one('file=shared/a');
    await one('file=shared/b');
    assert.equal((await one('file=shared/c')).overallCode, Code.OVER_LIMIT, 'one counter for the pattern');
  });

  it('makes a request over in quota mode only when every quota descriptor is over', async () => {
    clock.now = NOON + 360_000;
    await one('model=m1');
    const mixed = await ask([{ entries: ['model=m1'] }, { entries: ['model=m2'] }]);
    assert.deepEqual(codes(mixed), [Code.OVER_LIMIT, Code.OK]);
    assert.equal(mixed.overallCode, Code.OK);
    const all = await ask([{ entries: ['model=m1'] }, { entries: ['model=m2'] }]);
    assert.equal(all.overallCode, Code.OVER_LIMIT);
  });

  it('spends a request hits_addend, and a descriptor hits_addend of 0 checks without counting', async () => {
    clock.now = NOON + 420_000;
    assert.equal((await ask([{ entries: ['client=c'] }], 'edge', 2)).statuses[0]?.limitRemaining, 1);
    const check = await ask([{ entries: ['client=c'], hits: 0 }]);
    assert.equal(check.overallCode, Code.OK);
    assert.equal(check.statuses[0]?.limitRemaining, 1);
    assert.equal((await one('client=c')).statuses[0]?.limitRemaining, 0, 'the check spent nothing');
    assert.equal((await ask([{ entries: ['client=c'], hits: 0 }])).overallCode, Code.OVER_LIMIT);
  });

  it("counts a tollgate block's token bucket, costs from hits_addend", async () => {
    clock.now = NOON + 480_000;
    assert.equal((await ask([{ entries: ['tokens=k'], hits: 10 }])).overallCode, Code.OK);
    assert.equal((await one('tokens=k')).overallCode, Code.OVER_LIMIT);
    clock.now += 1000;
    assert.equal((await one('tokens=k')).overallCode, Code.OK, 'one token back a second later');
  });

  it('applies a reloaded file between two calls, keeping the count', async () => {
    clock.now = NOON + 540_000;
    await one('client=r');
    await one('client=r');
    writeFileSync(
      join(dir, 'limits.yaml'),
      LIMITS.replace('requests_per_unit: 3 }', 'requests_per_unit: 4 }'),
    );
    await service.reload();
    const after = await one('client=r');
    assert.deepEqual([after.overallCode, after.statuses[0]?.limitRemaining], [Code.OK, 1]);
    assert.equal(after.statuses[0]?.currentLimit?.requestsPerUnit, 4);
    writeFileSync(join(dir, 'limits.yaml'), LIMITS);
    await service.reload();
  });
});
