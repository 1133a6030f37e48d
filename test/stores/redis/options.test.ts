// RedisStore's options are checked at construction, and its retention cap against each limiter at wire-up.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createLimiter,
  fixedWindow,
  slidingWindowCounter,
  TollgateError,
  tokenBucket,
} from '../../../src/index.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { throwsConfig } from '../../harness/policy-helpers.js';

describe('RedisStore maxTtlSeconds', () => {
  it('is unset by default: a 30-day quota and a bucket that never refills are accepted', () => {
    const store = new RedisStore();
    createLimiter({ policy: fixedWindow({ limit: 5, windowMs: '30d' }), store });
    createLimiter({ policy: tokenBucket({ capacity: 5, refillPerSecond: 0 }), store });
  });

  it('refuses, at wire-up, a limiter whose keys it would expire before they are at rest, naming both', () => {
    const store = new RedisStore({ maxTtlSeconds: 86_400 });
    const monthly = fixedWindow({ limit: 5, windowMs: '30d', name: 'monthly' });
    throwsConfig(() => createLimiter({ policy: monthly, store }), 'maxTtlSeconds');
    assert.throws(
      () => createLimiter({ policy: monthly, store }),
      /`maxTtlSeconds` must be at least 2592000 \(s\) for policy "monthly".*\(received 86400\)/,
    );
    assert.throws(
      () => createLimiter({ policy: tokenBucket({ capacity: 1, refillPerSecond: 0, name: 'once' }), store }),
      /`maxTtlSeconds` cannot be set while policy "once"/,
    );
    // Twice the window for the counter: 12 h windows need a day.
    createLimiter({ policy: slidingWindowCounter({ limit: 5, windowMs: '12h' }), store });
    throwsConfig(
      () => createLimiter({ policy: slidingWindowCounter({ limit: 5, windowMs: '13h' }), store }),
      'maxTtlSeconds',
    );
  });

  it('a fallbackShare that scales a policy below what the engine represents: refused at wire-up, not in an outage', () => {
    const yearly = tokenBucket({ capacity: 1, refillPerSecond: 1 / (365 * 86_400) });
    throwsConfig(
      () =>
        createLimiter({ policy: yearly, store: new RedisStore({ fallback: 'memory', fallbackShare: 0.01 }) }),
      'fallbackShare',
    );
    createLimiter({ policy: yearly, store: new RedisStore({ fallbackShare: 0.01 }) });
    createLimiter({ policy: yearly, store: new RedisStore({ fallback: 'memory', fallbackShare: 0.5 }) });
  });

  it('must be a positive integer no smaller than minTtlSeconds', () => {
    throwsConfig(() => new RedisStore({ maxTtlSeconds: 0 }), 'maxTtlSeconds');
    throwsConfig(() => new RedisStore({ maxTtlSeconds: 1.5 }), 'maxTtlSeconds');
    throwsConfig(() => new RedisStore({ maxTtlSeconds: 30 }), 'minTtlSeconds');
    new RedisStore({ maxTtlSeconds: 30, minTtlSeconds: 30 });
  });
});

describe('RedisStore connection options are checked at construction', () => {
  const bad = (value: unknown) => value as never;

  it('refuses a malformed db, port, host, username, password, socket or logger, naming it', () => {
    for (const db of [bad('x'), -1, 1.5, Number.NaN, 2 ** 31])
      throwsConfig(() => new RedisStore({ db }), 'db');
    for (const port of [0, 65_536, 1.5, bad('6379'), Number.NaN])
      throwsConfig(() => new RedisStore({ port }), 'port');
    for (const host of ['', ' ', 'a b', 'h/1', '$', 'h:1', bad(5)])
      throwsConfig(() => new RedisStore({ host }), 'host');
    throwsConfig(() => new RedisStore({ username: bad(5) }), 'username');
    throwsConfig(() => new RedisStore({ password: bad(['p']) }), 'password');
    throwsConfig(() => new RedisStore({ username: 'app' }), 'username');
    new RedisStore({ username: 'app', password: 'secret' });
    new RedisStore({ url: 'redis://app:secret@h:1', username: 'other' });
    for (const socket of [bad('tls'), bad([]), bad(null)])
      throwsConfig(() => new RedisStore({ socket }), 'socket');
    throwsConfig(() => new RedisStore({ logger: bad({}) }), 'logger');
  });

  it('refuses a timer longer than Node waits (it would fire at once): 2^31 ms and more', () => {
    for (const option of ['commandTimeoutMs', 'connectTimeoutMs', 'reconnectCooldownMs'] as const) {
      throwsConfig(() => new RedisStore({ [option]: 2 ** 31 }), option);
      new RedisStore({ [option]: 2 ** 31 - 1 });
    }
  });

  it('refuses a socket option that would undo what the store sets (no offline queue, its retry pace)', () => {
    for (const key of ['enableOfflineQueue', 'retryStrategy', 'db', 'host', 'connectTimeout', 'keyPrefix'])
      throwsConfig(() => new RedisStore({ socket: { [key]: true } }), 'socket');
    new RedisStore({ socket: { tls: {}, keepAlive: 1000 } });
    // A Unix socket instead of an address, never beside one.
    new RedisStore({ socket: { path: '/run/redis.sock' } });
    for (const address of [
      { url: 'redis://h:1' },
      { host: 'h' },
      { port: 1 },
      { rootNodes: [{ host: 'h', port: 1 }] },
    ])
      throwsConfig(() => new RedisStore({ ...address, socket: { path: '/run/redis.sock' } }), 'socket');
  });

  it('refuses a url that is not redis:// or rediss://, without echoing its password', () => {
    const urls = [
      'x',
      'http://h:6379',
      'redis://',
      'redis://h:6379/x',
      'redis://h/1?a=1',
      'redis://h:0',
      bad(6379),
    ];
    for (const url of urls) throwsConfig(() => new RedisStore({ url }), 'url');
    // Malformed percent-escapes in the credentials: a configuration error, not a URIError.
    for (const url of ['redis://:p%zz@h', 'redis://u%ZZ:pw@h'])
      throwsConfig(() => new RedisStore({ url }), 'url');
    for (const options of [
      { url: 'redis://:s3cret@h:6379/zero' },
      { url: new URL('redis://:s3cret@h:6379') as never },
      { rootNodes: ['redis://:s3cret@h:6379'] as never },
      { rootNodes: 'redis://:s3cret@h:6379' as never },
    ])
      assert.throws(
        () => new RedisStore(options),
        (error: Error) => error instanceof TollgateError && !error.message.includes('s3cret'),
      );
    new RedisStore({ url: 'rediss://user:pass@h.example:6380/2' });
  });

  it('refuses url together with host or port, and a db the url contradicts, instead of picking one', () => {
    throwsConfig(() => new RedisStore({ url: 'redis://h:6379', host: 'other' }), 'host');
    throwsConfig(() => new RedisStore({ url: 'redis://h:6379', port: 6380 }), 'port');
    throwsConfig(() => new RedisStore({ url: 'redis://h:6379/3', db: 4 }), 'db');
    new RedisStore({ url: 'redis://h:6379/3', db: 3 });
  });

  it('refuses malformed cluster nodes, and credentials that differ between them', () => {
    const nodes = [
      [{ url: 'http://h:1' }],
      [{ host: 'h' }],
      [{ host: 'h', port: 0 }],
      [{ url: 'redis://h:1', host: 'h' }],
      [{ url: 'redis://h:1/2' }],
      [{ url: 'redis://:a@h:1' }, { url: 'redis://:b@h:2' }],
      [],
      [null],
    ];
    for (const rootNodes of nodes)
      throwsConfig(() => new RedisStore({ rootNodes: bad(rootNodes) }), 'rootNodes');
    new RedisStore({
      rootNodes: [{ url: 'redis://:a@h:1' }, { url: 'redis://:a@h:2' }, { host: 'h', port: 3 }],
    });
    new RedisStore({ rootNodes: [{ url: 'redis://:a@h:1' }], username: 'app' });
  });
});
