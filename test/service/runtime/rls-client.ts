// A real Envoy-side client for the service's tests: ShouldRateLimit over @grpc/grpc-js, from the repository's proto files.
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

const PROTO = fileURLToPath(new URL('../../../proto/', import.meta.url));

export interface RlsStatus {
  readonly code: 'UNKNOWN' | 'OK' | 'OVER_LIMIT';
  readonly limitRemaining: number;
  readonly currentLimit: {
    readonly name: string;
    readonly requestsPerUnit: number;
    readonly unit: string;
  } | null;
}

export interface RlsResponse {
  readonly overallCode: 'UNKNOWN' | 'OK' | 'OVER_LIMIT';
  readonly statuses: readonly RlsStatus[];
}

export interface RlsClient {
  /** One ShouldRateLimit call: `entries` as `key=value` pairs make one descriptor. */
  check(domain: string, ...entries: string[]): Promise<RlsResponse>;
  close(): void;
}

type ServiceClient = grpc.Client & {
  ShouldRateLimit(
    request: unknown,
    callback: (error: grpc.ServiceError | null, response: RlsResponse) => void,
  ): void;
};

const definition = loadSync('envoy/service/ratelimit/v3/rls.proto', {
  includeDirs: [PROTO],
  longs: Number,
  enums: String,
  defaults: true,
});
const loaded = grpc.loadPackageDefinition(definition) as unknown as {
  envoy: { service: { ratelimit: { v3: { RateLimitService: new (...args: unknown[]) => ServiceClient } } } };
};
const { RateLimitService } = loaded.envoy.service.ratelimit.v3;

/** A client of the service on 127.0.0.1:`port`, plaintext as Envoy's cluster to it is. */
export function rlsClient(port: number): RlsClient {
  const client = new RateLimitService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return {
    check: (domain, ...entries) =>
      new Promise((resolve, reject) => {
        const descriptor = {
          entries: entries.map((entry) => {
            const [key, value] = entry.split('=') as [string, string];
            return { key, value };
          }),
        };
        client.ShouldRateLimit({ domain, descriptors: [descriptor] }, (error, response) =>
          error === null ? resolve(response) : reject(error),
        );
      }),
    close: () => client.close(),
  };
}

/** Polls `condition` every 20 ms until it holds; rejects with `what` after `timeoutMs`. Waits for an event, times nothing. */
export async function eventually(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`never happened within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
