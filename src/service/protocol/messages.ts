// Envoy's rate limit service messages (envoy.service.ratelimit.v3) as plain objects, shared by the gRPC and JSON codecs.

/** `RateLimitResponse.Code`: UNKNOWN = 0, OK = 1, OVER_LIMIT = 2. */
export const Code = { UNKNOWN: 0, OK: 1, OVER_LIMIT: 2 } as const;
export type Code = (typeof Code)[keyof typeof Code];

/** `RateLimitResponse.RateLimit.Unit`, with the protocol's numbers. */
export const Unit = {
  UNKNOWN: 0,
  SECOND: 1,
  MINUTE: 2,
  HOUR: 3,
  DAY: 4,
  MONTH: 5,
  YEAR: 6,
  WEEK: 7,
} as const;
export type Unit = (typeof Unit)[keyof typeof Unit];

export interface Entry {
  readonly key: string;
  readonly value: string;
}

/** A descriptor's own limit, sent by Envoy to override the configured one. */
export interface LimitOverride {
  readonly requestsPerUnit: number;
  readonly unit: Unit;
}

export interface RateLimitDescriptor {
  readonly entries: readonly Entry[];
  readonly limit?: LimitOverride;
  /** The descriptor's own hits (a wrapped uint64): absent when unset; 0 checks without counting. */
  readonly hitsAddend?: number;
}

export interface RateLimitRequest {
  readonly domain: string;
  readonly descriptors: readonly RateLimitDescriptor[];
  /** Hits for every descriptor without its own; 0 (unset) means 1. */
  readonly hitsAddend: number;
}

/** `RateLimitResponse.RateLimit`: the limit a status was decided under. */
export interface CurrentLimit {
  readonly name: string;
  readonly requestsPerUnit: number;
  readonly unit: Unit;
}

export interface DescriptorStatus {
  readonly code: Code;
  readonly currentLimit?: CurrentLimit;
  readonly limitRemaining: number;
  /** Whole milliseconds until the limit resets; absent when no limit applied. */
  readonly durationUntilResetMs?: number;
}

export interface HeaderValue {
  readonly key: string;
  readonly value: string;
}

export interface RateLimitResponse {
  readonly overallCode: Code;
  /** One per request descriptor, in order. */
  readonly statuses: readonly DescriptorStatus[];
  readonly responseHeadersToAdd: readonly HeaderValue[];
  readonly requestHeadersToAdd: readonly HeaderValue[];
  /** The body Envoy answers a limited request with, when the configuration sets one. */
  readonly rawBody?: Uint8Array;
}
