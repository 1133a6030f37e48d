// API-key identity: only a recognised key names the client; any other key counts as the fallback (the IP).
import { createHash } from 'node:crypto';
import { configError } from '../core/errors.js';
import { optionalFunction } from '../core/validate.js';
import type { Identity } from './identity.js';

export interface ApiKeyIdentityOptions<Req> {
  /** The recognised keys. */
  readonly keys: Iterable<string>;
  /** Where the key travels. Default 'x-api-key'. */
  readonly header?: string;
  /** The identity of a request without a recognised key; usually the client address. */
  readonly fallback: (req: Req) => Identity | Promise<Identity>;
  /**
   * Reads the header. The default reads `req.headers` (node:http, Express, Fastify, Koa's ctx) or a Fetch
   * `Headers`; on Hono pass `(c, name) => c.req.header(name)`.
   */
  readonly read?: (req: Req, header: string) => string | undefined;
}

/**
 * The identity a recognised key gets: `key:` and a digest of it. Keys never appear in bucket keys (Redis
 * `KEYS`, `MONITOR`, admin output), and `key:` keeps them apart from addresses.
 */
export function apiKeyId(key: string): string {
  return `key:${digest(key)}`;
}

/**
 * An `identifier` for any adapter. An unrecognised key is treated exactly like no key: if it named a bucket of
 * its own, a client could mint a fresh quota per request just by changing the header.
 */
export function apiKeyIdentity<Req>(
  options: ApiKeyIdentityOptions<Req>,
): (req: Req) => Identity | Promise<Identity> {
  const { header = 'x-api-key', fallback } = options;
  if (typeof header !== 'string' || header === '')
    throw configError('header', 'must be a header name', header);
  if (typeof fallback !== 'function') throw configError('fallback', 'must be a function', fallback);
  const read = optionalFunction('read', options.read) ?? readHeader;
  // Digests, so that the per-request lookup compares digests rather than the secrets themselves.
  const known = new Set<string>();
  for (const key of options.keys ?? []) {
    if (typeof key !== 'string' || key === '') throw configError('keys', 'must hold non-empty strings', key);
    known.add(digest(key));
  }
  const name = header.toLowerCase();
  return (req) => {
    const presented = read(req, name);
    if (typeof presented === 'string' && presented !== '') {
      const id = digest(presented);
      if (known.has(id)) return `key:${id}`;
    }
    return fallback(req);
  };
}

function digest(key: string): string {
  // 96 bits of hex: plain for the key encoder (so readable in Redis), far beyond any collision in practice.
  return createHash('sha256').update(key).digest('hex').slice(0, 24);
}

function readHeader(req: unknown, name: string): string | undefined {
  const headers = (req as { headers?: unknown } | null)?.headers;
  if (typeof (headers as Headers | undefined)?.get === 'function')
    return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown> | undefined)?.[name];
  // A repeated header is ambiguous, so it is not a key.
  return typeof value === 'string' ? value : undefined;
}
