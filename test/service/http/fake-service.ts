// A stand-in for the configuration and the decision engine (each descriptor counted apart against one limit), and
// the HTTP server started over them, closed when the test file ends.
import { after } from 'node:test';
import type { HttpCheckRules, HttpDescriptorRule, ServiceConfig } from '../../../src/service/config/types.js';
import { type HttpServerOptions, startHttpServer } from '../../../src/service/http/http-server.js';
import {
  Code,
  type RateLimitRequest,
  type RateLimitResponse,
  Unit,
} from '../../../src/service/protocol/messages.js';

/** A configuration holding only HTTP check rules, per domain in order; it matches no limit itself. */
export function checkConfig(
  checks: readonly { domain: string; denyStatus?: 403 | 429; descriptors: HttpDescriptorRule[] }[],
): ServiceConfig {
  const httpChecks = new Map<string, HttpCheckRules>(
    checks.map(({ domain, denyStatus = 429, descriptors }) => [
      domain,
      { domain, descriptors, denyStatus, source: { file: 'fake.yaml', line: 1 } },
    ]),
  );
  return {
    files: ['fake.yaml'],
    domains: checks.map(({ domain }) => domain),
    findLimit: () => undefined,
    httpChecks,
    rawBodies: new Map(),
  };
}

/** `limit` hits per descriptor (its domain and entries) for good: the requests it was asked, kept for assertions. */
export function countingEngine(limit: number) {
  const counts = new Map<string, number>();
  const requests: RateLimitRequest[] = [];
  const shouldRateLimit = async (request: RateLimitRequest): Promise<RateLimitResponse> => {
    requests.push(request);
    const statuses = request.descriptors.map((descriptor) => {
      const key = JSON.stringify([request.domain, descriptor.entries]);
      const count = (counts.get(key) ?? 0) + (descriptor.hitsAddend ?? (request.hitsAddend || 1));
      counts.set(key, count);
      const over = count > limit;
      return {
        code: over ? Code.OVER_LIMIT : Code.OK,
        currentLimit: { name: '', requestsPerUnit: limit, unit: Unit.MINUTE },
        limitRemaining: Math.max(0, limit - count),
        durationUntilResetMs: 1500,
      };
    });
    const over = statuses.some(({ code }) => code === Code.OVER_LIMIT);
    const least = Math.min(...statuses.map(({ limitRemaining }) => limitRemaining));
    return {
      overallCode: over ? Code.OVER_LIMIT : Code.OK,
      statuses,
      responseHeadersToAdd: [
        { key: 'RateLimit-Policy', value: `"minute";q=${limit};w=60` },
        { key: 'RateLimit', value: `"minute";r=${least};t=2` },
        ...(over ? [{ key: 'Retry-After', value: '2' }] : []),
      ],
      requestHeadersToAdd: [],
    };
  };
  return { shouldRateLimit, requests };
}

export const BY_ADDRESS = {
  entries: [{ type: 'remote_address', key: 'remote_address', trustedHops: 0 }],
} as const;

const servers: { close(graceMs: number): Promise<void> }[] = [];
after(() => Promise.all(servers.map((server) => server.close(0))));

/**
 * The server over a stand-in engine (5 hits per descriptor) and domain `edge`, limited by client address, its
 * errors logged into `logged`; `options` replace any part.
 */
export async function serve(options: Partial<HttpServerOptions> = {}) {
  const engine = countingEngine(5);
  const logged: { errors: unknown[][] } = { errors: [] };
  const config = checkConfig([{ domain: 'edge', descriptors: [BY_ADDRESS] }]);
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    shouldRateLimit: engine.shouldRateLimit,
    config: () => config,
    healthy: async () => ({ ok: true }),
    metricsText: () => '# metrics\n',
    logger: { warn: () => {}, error: (...args: unknown[]) => logged.errors.push(args) },
    ...options,
  });
  servers.push(server);
  const call = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${server.port}${path}`, init);
  return { server, engine, logged, call };
}

export async function statuses(responses: Promise<Response>[]): Promise<number[]> {
  return (await Promise.all(responses)).map(({ status }) => status);
}
