// Pure: a decision to rate-limit header fields, in each IETF draft's form and the widely deployed X-RateLimit set.
import { createHash } from 'node:crypto';
import type { PolicyFacts } from '../policies/local-policy.js';
import { isFailMode } from '../stores/store.js';
import type { Decision } from './decision.js';

/**
 * The standard fields, as express-rate-limit 8 writes them for drafts 6 to 8 (same bytes for the same figures):
 * - `'draft-6'`: `RateLimit-Policy` plus `RateLimit-Limit/Remaining/Reset`: what most clients parse today.
 * - `'draft-7'`: `RateLimit-Policy` plus one `RateLimit` dictionary, `limit=.., remaining=.., reset=..`.
 * - `'draft-8'`: `RateLimit-Policy` and `RateLimit` as lists with one named item per policy, the policy's items
 *   carrying a partition key (`pk`) derived from the client's identity.
 * - `'draft-10'`: draft-ietf-httpapi-ratelimit-headers-10 and later: as draft-8, written compactly, without `pk`.
 *
 * In drafts 6 and 7 the single figures are the binding policy's (the one closest to denying), and
 * `RateLimit-Policy` lists every policy in the limiter's order, so it stays the same from response to response.
 */
export type HeaderStyle = 'draft-6' | 'draft-7' | 'draft-8' | 'draft-10';

export const HEADER_STYLES: readonly HeaderStyle[] = ['draft-6', 'draft-7', 'draft-8', 'draft-10'];

/** `X-RateLimit-Reset` as an ISO-8601 instant, or in epoch seconds (GitHub's and express-rate-limit's form). */
export type LegacyReset = 'iso-8601' | 'epoch-seconds';

export const LEGACY_RESETS: readonly LegacyReset[] = ['iso-8601', 'epoch-seconds'];

export interface HeaderOptions {
  /** `X-RateLimit-Limit/Remaining/Reset` beside the style's fields. Default: true with 'draft-6', else false. */
  readonly legacyHeaders?: boolean;
  /** The form of `X-RateLimit-Reset`. Default 'iso-8601'. */
  readonly legacyReset?: LegacyReset;
  /** The identity the request was counted under: draft-8's partition key comes from it (no `pk` without it). */
  readonly key?: string;
}

/** The fields for one decision, `key` being the identity it was counted under. */
export type HeaderWriter = (decision: Decision, key?: string) => Record<string, string>;

type Fields = Record<string, string>;
type Standard = (decision: Decision, headers: Fields, key: string | undefined) => void;
type Instant = (epochMs: number) => string;

/**
 * Header fields for a decision. `Retry-After` appears on denials that waiting can cure, and only then; `style`
 * false sends only the legacy set, if `options` asks for it, and otherwise nothing.
 */
export function rateLimitHeaders(
  decision: Decision,
  style: HeaderStyle | false = 'draft-6',
  options: HeaderOptions = {},
): Record<string, string> {
  const standard = style && STANDARD[style];
  const reset =
    (options.legacyHeaders ?? style === 'draft-6') && LEGACY_RESET[options.legacyReset ?? 'iso-8601'];
  // Nothing asked for is nothing sent, Retry-After included, as with the gate's `headers: false`.
  return standard || reset ? write(decision, options.key, standard, reset) : {};
}

/** The fields of a style and a legacy set (false: none), chosen once; undefined when neither sends anything. */
export function headerWriter(
  style: HeaderStyle | false,
  legacy: LegacyReset | false,
): HeaderWriter | undefined {
  const standard = style && STANDARD[style];
  const reset = legacy && LEGACY_RESET[legacy];
  return standard || reset ? (decision, key) => write(decision, key, standard, reset) : undefined;
}

function write(
  decision: Decision,
  key: string | undefined,
  standard: Standard | false,
  legacyReset: Instant | false,
): Fields {
  const headers: Fields = {};
  // A fail-open or fail-closed decision knows nothing of the client's quota: advertising one would be a guess.
  if (!isFailMode(decision.degraded)) {
    // express-rate-limit's order: the legacy set first.
    if (legacyReset) {
      headers['X-RateLimit-Limit'] = String(decision.limit);
      headers['X-RateLimit-Remaining'] = String(decision.remaining);
      if (decision.resetMs >= 0)
        headers['X-RateLimit-Reset'] = legacyReset(decision.nowMs + decision.resetMs);
    }
    if (standard) standard(decision, headers, key);
  }
  if (!decision.allowed && decision.retryAfterMs !== undefined)
    headers['Retry-After'] = retryAfterValue(decision.retryAfterMs);
  return headers;
}

/** `Retry-After` for a wait of `ms`: whole seconds, rounded up, and never 0, which would invite a retry at once. */
export function retryAfterValue(ms: number): string {
  return String(Math.max(1, seconds(ms)));
}

const STANDARD: Record<HeaderStyle, Standard> = {
  'draft-6': (decision, headers) => {
    headers['RateLimit-Policy'] = quotaList(decision);
    headers['RateLimit-Limit'] = String(decision.limit);
    headers['RateLimit-Remaining'] = String(decision.remaining);
    if (decision.resetMs >= 0) headers['RateLimit-Reset'] = String(seconds(decision.resetMs));
  },
  'draft-7': (decision, headers) => {
    headers['RateLimit-Policy'] = quotaList(decision);
    const state = `limit=${decision.limit}, remaining=${decision.remaining}`;
    headers.RateLimit = decision.resetMs >= 0 ? `${state}, reset=${seconds(decision.resetMs)}` : state;
  },
  'draft-8': (decision, headers, key) => {
    // The partition key tells a client which partition of the policy it is counted in (a hash, not a secret).
    const pk = key === undefined ? '' : `; pk=:${partitionKey(key)}:`;
    let policy = '';
    let state = '';
    for (const { policy: p, remaining, resetMs } of decision.policies) {
      const { name, draft8 } = texts(p);
      const separator = policy === '' ? '' : ', ';
      policy += `${separator}${draft8}${pk}`;
      state += `${separator}${name}; r=${remaining}${resetMs >= 0 ? `; t=${seconds(resetMs)}` : ''}`;
    }
    headers.RateLimit = state;
    headers['RateLimit-Policy'] = policy;
  },
  'draft-10': (decision, headers) => {
    let policy = '';
    let state = '';
    for (const { policy: p, remaining, resetMs } of decision.policies) {
      const { name, draft10 } = texts(p);
      const separator = policy === '' ? '' : ', ';
      policy += `${separator}${draft10}`;
      state += `${separator}${name};r=${remaining}${resetMs >= 0 ? `;t=${seconds(resetMs)}` : ''}`;
    }
    headers['RateLimit-Policy'] = policy;
    headers.RateLimit = state;
  },
};

const LEGACY_RESET: Record<LegacyReset, Instant> = {
  'iso-8601': isoInstant,
  'epoch-seconds': (epochMs) => String(seconds(epochMs)),
};

/** Drafts 6 and 7: `<quota>;w=<window seconds>` per policy (no `w` for one without a window), in limiter order. */
function quotaList(decision: Decision): string {
  let list = '';
  for (const { policy } of decision.policies)
    list += list === '' ? texts(policy).quota : `, ${texts(policy).quota}`;
  return list;
}

/** A policy's fixed parts in each style, written once per policy object (a moving limit is a new object each time). */
interface PolicyTexts {
  /** An RFC 9651 String (policy names are restricted to characters that need no escaping). */
  readonly name: string;
  readonly quota: string;
  readonly draft8: string;
  readonly draft10: string;
}

const policyTexts = new WeakMap<PolicyFacts, PolicyTexts>();

function texts(policy: PolicyFacts): PolicyTexts {
  return policyTexts.get(policy) ?? written(policy);
}

function written(policy: PolicyFacts): PolicyTexts {
  const name = `"${policy.name}"`;
  const { limit } = policy;
  // A token bucket's window is its time to refill from empty. A concurrency limit has none (0): its quota is
  // requests in flight, which the drafts name as a quota unit.
  const window = seconds(policy.windowMs);
  const unit = policy.quotaUnit;
  const extra = window > 0 ? `w=${window}` : unit === undefined ? '' : `qu="${unit}"`;
  const fixed = {
    name,
    quota: window > 0 ? `${limit};w=${window}` : `${limit}`,
    draft8: extra === '' ? `${name}; q=${limit}` : `${name}; q=${limit}; ${extra}`,
    draft10: extra === '' ? `${name};q=${limit}` : `${name};q=${limit};${extra}`,
  };
  policyTexts.set(policy, fixed);
  return fixed;
}

/** express-rate-limit's partition key: the first 12 hex digits of the identity's SHA-256, as base64. */
function partitionKey(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return Buffer.from(hex).toString('base64');
}

/** The last second written, to the second, in ISO-8601: one entry, since consecutive resets mostly share it. */
const isoSeconds = new Map<number, string>();

/** `new Date(ms).toISOString()` at a sixth of the cost under load, its date and time to the second reused. */
function isoInstant(epochMs: number): string {
  const second = Math.floor(epochMs / 1000);
  const milli = epochMs - second * 1000;
  return `${isoSeconds.get(second) ?? isoSecond(second)}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

function isoSecond(second: number): string {
  const prefix = new Date(second * 1000).toISOString().slice(0, 20);
  isoSeconds.clear();
  isoSeconds.set(second, prefix);
  return prefix;
}

/** Whole seconds, rounded up so a client never comes back early. */
function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}
