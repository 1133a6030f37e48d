// The options that describe the store's own connection, and their checks at wire-up: URLs, hosts, ports, cluster nodes.
import { isIPv6 } from 'node:net';
import { configError } from '../../core/errors.js';

export type RootNode = { readonly url: string } | { readonly host: string; readonly port: number };

export interface ConnectionOptions {
  /** Where to connect when no client is given: `redis://` or `rediss://`; excludes `host` and `port`. */
  readonly url?: string;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 6379. */
  readonly port?: number;
  /** Used unless the URL carries credentials. */
  readonly username?: string;
  readonly password?: string;
  /** Database index, checked against the server when it connects. Not in cluster mode. */
  readonly db?: number;
  /**
   * Merged into the ioredis connection options: TLS, a Unix socket (`path`, instead of `url`, `host` and `port`)
   * and the like; what the store sets itself is refused.
   */
  readonly socket?: Readonly<Record<string, unknown>>;
  /** Redis Cluster: the nodes to discover the cluster from. Switches the store's own connection to cluster mode. */
  readonly rootNodes?: readonly RootNode[];
}

/** The options that describe a connection of the store's own: with an app-owned `client`, none applies. */
export const CONNECTION_OPTIONS = [
  'url',
  'host',
  'port',
  'username',
  'password',
  'db',
  'socket',
  'rootNodes',
] as const;

/** What the store decides about its own connection; `socket` may not override it. */
const OWN_SOCKET_KEYS = [
  'host',
  'port',
  'db',
  // ioredis would prefix the keys of commands, but not the pattern of a SCAN: `keys()` would find nothing.
  'keyPrefix',
  'username',
  'password',
  'lazyConnect',
  'enableOfflineQueue',
  'maxRetriesPerRequest',
  'retryStrategy',
  'connectTimeout',
];

/** The largest database index Redis accepts (`databases` is a C int). */
const MAX_DB = 2 ** 31 - 1;

export interface Address {
  readonly host: string;
  readonly port: number;
  readonly db?: number;
  readonly username?: string;
  readonly password?: string;
  readonly tls: boolean;
}

/**
 * Throws a configuration error naming the first option that could not describe a working connection, so that a
 * mistake surfaces at construction instead of as a connection that fails for ever (or, for `db: 'x'`, an
 * unhandled error that ends the process).
 */
export function checkConnectionOptions(options: ConnectionOptions): void {
  const { url, host, port, username, password, db, socket, rootNodes } = options;
  if (url !== undefined) {
    const address = parseUrl('url', url);
    for (const named of ['host', 'port'] as const) {
      if (options[named] !== undefined)
        throw configError(named, 'cannot be combined with `url` (the URL names the host and port)');
    }
    if (db !== undefined && address.db !== undefined && db !== address.db)
      throw configError('db', `differs from the database the \`url\` names (${address.db})`, db);
  }
  if (host !== undefined) hostName('host', host);
  if (port !== undefined) portNumber('port', port);
  for (const [name, value] of [
    ['username', username],
    ['password', password],
  ] as const) {
    if (value !== undefined && typeof value !== 'string') throw configError(name, 'must be a string');
  }
  if (username !== undefined && password === undefined && !hasPassword(options))
    throw configError('username', 'needs a `password` (Redis authenticates the pair)');
  if (db !== undefined && (typeof db !== 'number' || !Number.isInteger(db) || db < 0 || db > MAX_DB))
    throw configError('db', 'must be a database index (a non-negative integer)', db);
  if (socket !== undefined) {
    if (typeof socket !== 'object' || socket === null || Array.isArray(socket))
      throw configError(
        'socket',
        'must be an object of ioredis connection options (TLS and the like)',
        socket,
      );
    const own = OWN_SOCKET_KEYS.find((key) => key in socket);
    if (own !== undefined)
      throw configError('socket', `may not set \`${own}\`: the store sets it (see its own options)`);
    if (
      'path' in socket &&
      (url !== undefined || host !== undefined || port !== undefined || rootNodes !== undefined)
    )
      throw configError(
        'socket',
        '`path` (a Unix socket) cannot be combined with `url`, `host`, `port` or `rootNodes`',
      );
  }
  if (rootNodes !== undefined) checkCluster(options);
}

function checkCluster(options: ConnectionOptions): void {
  const { rootNodes } = options;
  if (!Array.isArray(rootNodes) || rootNodes.length === 0)
    throw configError('rootNodes', 'must be a non-empty array of { url } or { host, port }');
  const addresses = rootNodes.map(nodeAddress);
  const agree = (field: 'username' | 'password' | 'tls') =>
    new Set(addresses.filter((a) => a.password !== undefined || a.tls).map((a) => a[field])).size <= 1;
  if (!agree('username') || !agree('password') || !agree('tls'))
    throw configError(
      'rootNodes',
      'URLs must all carry the same credentials and scheme (one cluster, one login)',
    );
  if (options.db !== undefined)
    throw configError('db', 'is not supported in cluster mode (Redis Cluster is always db 0)', options.db);
  for (const single of ['url', 'host', 'port'] as const) {
    if (options[single] !== undefined) throw configError(single, 'cannot be combined with `rootNodes`');
  }
}

export function nodeAddress(node: unknown): Address {
  const entry = node as Partial<{ url: unknown; host: unknown; port: unknown }> | null;
  // Never echoed: an entry may be a URL with a password in it.
  if (typeof entry !== 'object' || entry === null)
    throw configError('rootNodes', 'entries must be { url } or { host, port }');
  const keys = Object.keys(entry).sort().join(',');
  if (keys === 'url') {
    const address = parseUrl('rootNodes', entry.url);
    if (address.db !== undefined && address.db !== 0)
      throw configError('rootNodes', 'URLs may not name a database (Redis Cluster is always db 0)');
    return address;
  }
  if (keys !== 'host,port') throw configError('rootNodes', 'entries must be { url } or { host, port }');
  return { host: hostName('rootNodes', entry.host), port: portNumber('rootNodes', entry.port), tls: false };
}

/** A redis:// or rediss:// URL; its password never appears in an error message. */
export function parseUrl(option: string, value: unknown): Address {
  const form = 'must be a redis:// or rediss:// URL such as redis://[[user]:password@]host[:port][/db]';
  if (typeof value !== 'string') throw configError(option, form);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw configError(option, form);
  }
  if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '' || url.search !== '')
    throw configError(option, form);
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d{1,10}$/.test(path)) throw configError(option, `${form}, where db is a number`);
  if (url.port === '0') throw configError(option, `${form}, with a port from 1 to 65535`);
  const decoded = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw configError(option, `${form}, its user and password percent-encoded`);
    }
  };
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? 6379 : Number(url.port),
    ...(path === '' ? {} : { db: Number(path) }),
    ...(url.username === '' ? {} : { username: decoded(url.username) }),
    ...(url.password === '' ? {} : { password: decoded(url.password) }),
    tls: url.protocol === 'rediss:',
  };
}

/** Whether a URL of the options carries a password (a `username` alone is refused otherwise). */
function hasPassword({ url, rootNodes }: ConnectionOptions): boolean {
  const urls = [
    url,
    ...(Array.isArray(rootNodes) ? rootNodes : []).map((node) => (node as { url?: unknown })?.url),
  ];
  return urls.some(
    (candidate) => typeof candidate === 'string' && parseUrl('url', candidate).password !== undefined,
  );
}

function hostName(option: string, value: unknown): string {
  if (typeof value !== 'string' || !(/^[A-Za-z0-9._-]+$/.test(value) || isIPv6(value)))
    throw configError(option, 'must be a host name or IP address', value);
  return value;
}

function portNumber(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65_535)
    throw configError(option, 'must be a port number from 1 to 65535', value);
  return value;
}
