// Tollgate's own blocks: a descriptor's policies, fail mode and name; a file's HTTP check and body; their refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadServiceConfig } from '../../../src/service/config/load.js';
import { Unit } from '../../../src/service/protocol/messages.js';
import { find, loadError, loadFixtures, textError } from './helpers.js';

const config = loadFixtures(['tollgate.yaml']);
const file = (...lines: string[]) => `${lines.join('\n')}\n`;
/** A one-descriptor file whose descriptor holds `block` (indented lines under `- key: k`). */
const descriptor = (...block: string[]) =>
  file('domain: d', 'descriptors:', '  - key: k', ...block.map((line) => `    ${line}`));

describe("a descriptor's policies", () => {
  it('count instead of `rate_limit`, all of them, and the first is what `current_limit` reports', () => {
    const rule = find(config, 'edge', ['api_key', 'k1'])?.rule;
    assert.deepEqual(
      rule?.policies.map((policy) => [policy.kind, policy.name, policy.limit, policy.windowMs]),
      [
        ['token-bucket', 'token-bucket', 20, 4_000],
        ['fixed-window', 'daily', 1000, 86_400_000],
      ],
    );
    assert.equal(rule?.requestsPerUnit, 20);
    assert.equal(rule?.unit, Unit.SECOND);
    assert.equal(rule?.name, 'per-key');
    assert.equal(rule?.failMode, 'closed');
    assert.equal(rule?.unlimited, false);
  });

  it("report the unit nearest the first policy's window", () => {
    const login = find(config, 'edge', ['path', '/login'])?.rule;
    assert.equal(login?.requestsPerUnit, 5);
    assert.equal(login?.unit, Unit.MINUTE, '30 s is nearer a minute than a second');
    const search = find(config, 'edge', ['path', '/search'])?.rule;
    assert.equal(search?.unit, Unit.MINUTE);
    assert.deepEqual(
      search?.policies.map((policy) => [policy.kind, policy.name, policy.limit, policy.windowMs]),
      [
        ['sliding-window-counter', 'sliding-window-counter', 90, 90_000],
        ['aligned-window', 'aligned-window', 10_000, 172_800_000],
        ['token-bucket', 'slow', 10, 60_000],
      ],
    );
  });

  it('keep `rate_limit.name` and `replaces` beside them', () => {
    const login = find(config, 'edge', ['path', '/login'])?.rule;
    assert.equal(login?.name, 'login');
    assert.deepEqual(login?.replaces, ['per-key']);
    assert.equal(login?.policies[0]?.kind, 'sliding-window');
  });

  it('leave `rate_limit` counting when the block only sets a fail mode', () => {
    const rule = find(config, 'edge', ['remote_address', '10.0.0.1'])?.rule;
    assert.equal(rule?.failMode, 'memory');
    assert.equal(rule?.policies[0]?.kind, 'aligned-window');
    assert.equal(rule?.requestsPerUnit, 60);
    assert.equal(rule?.unit, Unit.MINUTE);
    assert.equal(find(loadFixtures(['basic.yaml']), 'test-domain', ['key2', 'x'])?.rule.failMode, undefined);
  });
});

describe("a file's HTTP check and body", () => {
  it("read the HTTP check's descriptors, with Envoy's actions", () => {
    const check = config.httpChecks.get('edge');
    assert.equal(check?.domain, 'edge');
    assert.equal(check?.denyStatus, 403);
    assert.deepEqual(check?.source, { file: 'tollgate.yaml', line: 35 });
    assert.deepEqual(check?.descriptors, [
      { entries: [{ type: 'remote_address', key: 'remote_address', trustedHops: 0 }] },
      {
        entries: [
          { type: 'request_header', key: 'path', header: 'x-forwarded-uri', skipIfAbsent: false },
          { type: 'remote_address', key: 'client', trustedHops: 1 },
        ],
      },
      {
        entries: [
          { type: 'generic_key', key: 'generic_key', value: 'all' },
          { type: 'request_header', key: 'api_key', header: 'x-api-key', skipIfAbsent: true },
        ],
      },
    ]);
    assert.equal(loadFixtures(['basic.yaml']).httpChecks.size, 0);
  });

  it('answer 429 unless told, and keep the body as bytes', () => {
    const text = file(
      'domain: d',
      'tollgate:',
      '  raw_body: nope',
      '  http_check:',
      '    descriptors:',
      '      - entries:',
      '          - remote_address:',
    );
    const parsed = loadServiceConfig([{ path: 'h.yaml', text }]);
    assert.equal(parsed.httpChecks.get('d')?.denyStatus, 429);
    assert.deepEqual(parsed.httpChecks.get('d')?.descriptors[0]?.entries, [
      { type: 'remote_address', key: 'remote_address', trustedHops: 0 },
    ]);
    assert.equal(new TextDecoder().decode(parsed.rawBodies.get('d')), 'nope');
    assert.equal(new TextDecoder().decode(config.rawBodies.get('edge')), 'slow down\n');
  });

  it("keep the first file's check first, and refuse a second one for a merged domain", () => {
    const check = (domain: string) =>
      file(
        `domain: ${domain}`,
        'tollgate:',
        '  http_check:',
        '    descriptors:',
        '      - entries:',
        '          - generic_key: { value: x }',
      );
    const two = loadServiceConfig([
      { path: 'b.yaml', text: check('b') },
      { path: 'a.yaml', text: check('a') },
    ]);
    assert.deepEqual([...two.httpChecks.keys()], ['b', 'a']);
    assert.equal(
      loadError(
        [
          { path: 'a.yaml', text: check('a') },
          { path: 'a2.yaml', text: check('a') },
        ],
        { mergeDomains: true },
      ),
      'a2.yaml:2: `tollgate.http_check` is already set for domain "a" by another file',
    );
  });
});

describe("refusals in Tollgate's blocks, with file, line and key", () => {
  const cases: [string, string, string][] = [
    [
      'unknown key',
      descriptor('tollgate:', '  limit: 5'),
      'x.yaml:5: `tollgate.limit` is not a known key here (known: name, fail, policies)',
    ],
    ['empty block', descriptor('tollgate: {}'), 'x.yaml:4: `tollgate` must set `policies`, `fail` or `name`'],
    [
      'nothing to count',
      descriptor('tollgate: { fail: open }'),
      'x.yaml:4: `tollgate` needs `policies`, or a `rate_limit` beside it, to count anything',
    ],
    [
      'bad fail mode',
      descriptor('tollgate: { fail: maybe, policies: [] }'),
      'x.yaml:4: `tollgate.fail` must be one of open, closed, memory (received "maybe")',
    ],
    [
      'no policies',
      descriptor('tollgate:', '  policies: []'),
      'x.yaml:5: `tollgate.policies` must list one policy or more',
    ],
    [
      'not a list',
      descriptor('tollgate:', '  policies: { token_bucket: {} }'),
      'x.yaml:5: `tollgate.policies` must be a list, not a map',
    ],
    [
      'unknown kind',
      descriptor('tollgate:', '  policies:', '    - leaky_bucket: { limit: 1 }'),
      'x.yaml:6: `tollgate.policies[0].leaky_bucket` is not a known key here (known: token_bucket, fixed_window, sliding_window, sliding_window_counter, aligned_window)',
    ],
    [
      'two kinds',
      descriptor(
        'tollgate:',
        '  policies:',
        '    - fixed_window: { limit: 1, period: 1s }',
        '      sliding_window: { limit: 1, period: 1s }',
      ),
      'x.yaml:6: `tollgate.policies[0]` must hold exactly one of token_bucket, fixed_window, sliding_window, sliding_window_counter, aligned_window',
    ],
    [
      'missing limit',
      descriptor('tollgate:', '  policies:', '    - fixed_window:', '        period: 1s'),
      'x.yaml:6: `tollgate.policies[0].fixed_window.limit` is required',
    ],
    [
      'missing period',
      descriptor('tollgate:', '  policies:', '    - sliding_window: { limit: 3 }'),
      'x.yaml:6: `tollgate.policies[0].sliding_window.period` is required',
    ],
    [
      'bad period',
      descriptor(
        'tollgate:',
        '  policies:',
        '    - aligned_window:',
        '        limit: 3',
        '        period: 5 parsecs',
      ),
      `x.yaml:8: \`tollgate.policies[0].aligned_window.period\` must be a positive whole number of milliseconds or a duration such as '10s' (received "5 parsecs")`,
    ],
    [
      'fractional limit',
      descriptor('tollgate:', '  policies:', '    - fixed_window: { limit: 2.5, period: 1s }'),
      'x.yaml:6: `tollgate.policies[0].fixed_window.limit` must be a whole number from 0 to 4294967295 (received 2.5)',
    ],
    [
      'both refills',
      descriptor(
        'tollgate:',
        '  policies:',
        '    - token_bucket: { capacity: 5, refill_per_second: 1, refill: { tokens: 1, period: 1s } }',
      ),
      'x.yaml:6: `tollgate.policies[0].token_bucket` must set exactly one of `refill_per_second` and `refill`',
    ],
    [
      'no refill',
      descriptor('tollgate:', '  policies:', '    - token_bucket: { capacity: 5 }'),
      'x.yaml:6: `tollgate.policies[0].token_bucket` must set exactly one of `refill_per_second` and `refill`',
    ],
    [
      'no capacity',
      descriptor('tollgate:', '  policies:', '    - token_bucket: { refill_per_second: 5 }'),
      'x.yaml:6: `tollgate.policies[0].token_bucket.capacity` is required',
    ],
    [
      'refill without tokens',
      descriptor(
        'tollgate:',
        '  policies:',
        '    - token_bucket:',
        '        capacity: 5',
        '        refill: { period: 1m }',
      ),
      'x.yaml:8: `tollgate.policies[0].token_bucket.refill.tokens` is required',
    ],
    [
      'same names',
      descriptor(
        'tollgate:',
        '  policies:',
        '    - fixed_window: { limit: 1, period: 1s }',
        '    - fixed_window: { limit: 9, period: 1h }',
      ),
      'x.yaml:7: `tollgate.policies[1]` repeats the policy name "fixed-window": give each policy a distinct `name`',
    ],
    [
      'bad policy name',
      descriptor('tollgate:', '  policies:', '    - fixed_window: { limit: 1, period: 1s, name: "a b" }'),
      'x.yaml:6: in `tollgate.policies[0].fixed_window`: `name` must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-" (received "a b")',
    ],
    [
      'window too large',
      descriptor('tollgate:', '  policies:', '    - fixed_window: { limit: 4294967295, period: 365d }'),
      'x.yaml:6: in `tollgate.policies[0].fixed_window`: `limit` times `windowMs` must stay below 2^51',
    ],
    [
      'unit beside policies',
      descriptor(
        'rate_limit:',
        '  unit: second',
        'tollgate:',
        '  policies: [{ fixed_window: { limit: 1, period: 1s } }]',
      ),
      'x.yaml:5: `rate_limit.unit` cannot be set beside `tollgate.policies`, which count this limit',
    ],
    [
      'two names',
      descriptor('rate_limit: { name: a, unit: second }', 'tollgate: { name: b, fail: open }'),
      'x.yaml:5: `tollgate.name` must be `rate_limit.name` ("a") or absent (received "b")',
    ],
    [
      'deny status',
      file('domain: d', 'tollgate:', '  http_check:', '    deny_status: 404'),
      'x.yaml:4: `tollgate.http_check.deny_status` must be 429 or 403 (received 404)',
    ],
    [
      'no check descriptors',
      file('domain: d', 'tollgate:', '  http_check: { deny_status: 403 }'),
      'x.yaml:3: `tollgate.http_check.descriptors` must list one descriptor or more',
    ],
    [
      'no entries',
      file('domain: d', 'tollgate:', '  http_check:', '    descriptors:', '      - entries: []'),
      'x.yaml:5: `tollgate.http_check.descriptors[0].entries` must list one entry or more',
    ],
    [
      'two actions',
      file(
        'domain: d',
        'tollgate:',
        '  http_check:',
        '    descriptors:',
        '      - entries:',
        '          - remote_address: {}',
        '            generic_key: { value: x }',
      ),
      'x.yaml:6: `tollgate.http_check.descriptors[0].entries[0]` must hold exactly one of remote_address, request_header, generic_key',
    ],
    [
      'header without key',
      file(
        'domain: d',
        'tollgate:',
        '  http_check:',
        '    descriptors:',
        '      - entries:',
        '          - request_header: { header: x-api-key }',
      ),
      'x.yaml:6: `tollgate.http_check.descriptors[0].entries[0].request_header.key` must be a non-empty string',
    ],
    [
      'bad header',
      file(
        'domain: d',
        'tollgate:',
        '  http_check:',
        '    descriptors:',
        '      - entries:',
        '          - request_header: { header: "x api", key: k }',
      ),
      'x.yaml:6: `tollgate.http_check.descriptors[0].entries[0].request_header.header` must be an HTTP header name (received "x api")',
    ],
    [
      'generic without value',
      file(
        'domain: d',
        'tollgate:',
        '  http_check:',
        '    descriptors:',
        '      - entries:',
        '          - generic_key: { key: k }',
      ),
      'x.yaml:6: `tollgate.http_check.descriptors[0].entries[0].generic_key.value` must be a non-empty string',
    ],
    [
      'negative hops',
      file(
        'domain: d',
        'tollgate:',
        '  http_check:',
        '    descriptors:',
        '      - entries:',
        '          - remote_address: { trusted_hops: -1 }',
      ),
      'x.yaml:6: `tollgate.http_check.descriptors[0].entries[0].remote_address.trusted_hops` must be a whole number from 0 to 64 (received -1)',
    ],
    [
      'unknown file key',
      file('domain: d', 'tollgate:', '  body: x'),
      'x.yaml:3: `tollgate.body` is not a known key here (known: raw_body, http_check)',
    ],
  ];
  for (const [name, text, message] of cases) {
    it(name, () => assert.equal(textError('x.yaml', text), message));
  }
});
