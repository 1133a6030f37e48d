// What a loaded service configuration is: per domain, a tree of descriptors with their limits, and the HTTP check's rules.
import type { AnyPolicy } from '../../policies/policy.js';
import type { RateLimitDescriptor, Unit } from '../protocol/messages.js';

/** Where a configuration item was written, for every message about it. */
export interface SourcePlace {
  /** '' for a limit a request sets itself (`descriptor.limit`), which no file declares. */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
}

/** What a descriptor does when its store cannot be reached: allow, deny, or count in this process alone. */
export type FailMode = 'open' | 'closed' | 'memory';

/** A limit as the configuration declares it at one descriptor. */
export interface LimitRule {
  /** The reference's stats key: `domain.key_value.key2...` along the configuration's path. */
  readonly fullKey: string;
  /** `rate_limit.name`, '' when unnamed: what another limit's `replaces` names. */
  readonly name: string;
  readonly replaces: readonly string[];
  /** Answers OK without counting. */
  readonly unlimited: boolean;
  /** Counted and reported, but never denies. */
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  /** Metrics per request value, not per configured key. */
  readonly detailedMetric: boolean;
  /** As `current_limit` reports it. */
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  /** What counts it: the reference's epoch-aligned window, or a `tollgate:` block's policies (all must pass). */
  readonly policies: readonly AnyPolicy[];
  /**
   * The length of the reference's window when it counts: every client's window ends at the same instant, which the
   * status reports even when nothing has been counted yet. Absent for a `tollgate:` block's policies.
   */
  readonly alignedWindowMs?: number;
  /** Absent: the store's own. */
  readonly failMode?: FailMode;
  /** The descriptor's `metadata:` block as written, for the response's dynamic metadata; absent when it has none. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The counters' namespace: the same across reloads for the same path and kinds of policy, so counts survive. */
  readonly scope: string;
  readonly source: SourcePlace;
}

/** The limit a request descriptor falls under, and the names it is counted and measured by. */
export interface LimitMatch {
  readonly rule: LimitRule;
  /** The counter's identifier: the request's entries, a wildcard shared past its threshold written as its pattern. */
  readonly counterKey: string;
  /** The per-descriptor metrics key (`detailed_metric` adds the request's values). */
  readonly statsKey: string;
}

/** How the HTTP check turns an HTTP request into descriptors. */
export interface HttpCheckRules {
  readonly domain: string;
  /** Each entry builds one descriptor, or none when a value it needs is missing (as Envoy's actions do). */
  readonly descriptors: readonly HttpDescriptorRule[];
  /** The status a denial answers: 429 (Traefik, Envoy ext_authz) or 403 (nginx auth_request). */
  readonly denyStatus: 429 | 403;
  readonly source: SourcePlace;
}

export type HttpEntryRule =
  /**
   * The client's address: the `X-Forwarded-For` entry past the trusted hops (its leftmost when it is shorter), else,
   * only without that header, X-Real-IP, else the peer.
   */
  | { readonly type: 'remote_address'; readonly key: string; readonly trustedHops: number }
  /** A request header's value (X-Forwarded-Method, X-Forwarded-Uri, an API key...). */
  | {
      readonly type: 'request_header';
      readonly key: string;
      readonly header: string;
      /**
       * When the header is absent: false drops the whole descriptor, true leaves out only this entry (Envoy's
       * `skip_if_absent`, false by default: its action then fails, and so does the descriptor).
       */
      readonly skipIfAbsent: boolean;
    }
  /** A fixed entry. */
  | { readonly type: 'generic_key'; readonly key: string; readonly value: string };

export interface HttpDescriptorRule {
  readonly entries: readonly HttpEntryRule[];
}

export interface ServiceConfig {
  /** The files it was loaded from, in load order. */
  readonly files: readonly string[];
  readonly domains: readonly string[];
  /** The limit `descriptor` falls under in `domain`, by the reference's matching rules; undefined for none. */
  findLimit(domain: string, descriptor: RateLimitDescriptor): LimitMatch | undefined;
  /** The HTTP check's rules, per domain; the first loaded is the default. */
  readonly httpChecks: ReadonlyMap<string, HttpCheckRules>;
  /** `raw_body` answered with OVER_LIMIT, per domain, when the file sets one. */
  readonly rawBodies: ReadonlyMap<string, Uint8Array>;
}
