// The servers the service section measures, each in a process of its own so that its CPU time is its alone.
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { rateLimit } from '../src/adapters/express/express.js';
import { MemoryStore } from '../src/index.js';
import { createRateLimitService } from '../src/service/index.js';

/** A quota never reached: the section measures the path of an admission. */
export const LIMIT = 1_000_000;

export type ServerKind = 'service' | 'express' | 'grpc-floor';

export interface ServerReady {
  readonly grpcPort?: number;
  readonly httpPort: number;
}

/** The service's configuration: one limit per client address, for gRPC descriptors and the HTTP check alike. */
const CONFIG = `domain: bench
descriptors:
  - key: remote_address
    rate_limit:
      unit: hour
      requests_per_unit: ${LIMIT}
tollgate:
  http_check:
    descriptors:
      - entries:
          - remote_address: {}
`;

async function startService(): Promise<ServerReady> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  writeFileSync(join(dir, 'limits.yaml'), CONFIG);
  const service = await createRateLimitService({
    config: dir,
    grpc: { host: '127.0.0.1', port: 0 },
    http: { host: '127.0.0.1', port: 0 },
    watch: false,
  });
  return { grpcPort: service.grpcPort, httpPort: service.httpPort };
}

async function startExpress(): Promise<ServerReady> {
  const app = express();
  app.set('trust proxy', 1);
  app.use(rateLimit({ requestsPerMinute: LIMIT, store: new MemoryStore() }));
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { httpPort: (server.address() as AddressInfo).port };
}

/**
 * grpc-js alone, as the service configures it, answering every ShouldRateLimit with a fixed OK and decoding
 * nothing: what the transport costs before any decision, the floor under the service's gRPC figures.
 */
async function startGrpcFloor(): Promise<ServerReady> {
  const same = (bytes: Buffer) => bytes;
  const method = {
    path: '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
    requestStream: false,
    responseStream: false,
    requestSerialize: same,
    requestDeserialize: same,
    responseSerialize: same,
    responseDeserialize: same,
  };
  const ok = Buffer.from([8, 1]); // overall_code: OK
  const server = new grpc.Server();
  server.addService(
    { ShouldRateLimit: method },
    {
      ShouldRateLimit: (_call: unknown, answer: (error: null, value: Buffer) => void) => answer(null, ok),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    ),
  );
  return { grpcPort: port, httpPort: 0 };
}

const STARTS: Record<ServerKind, () => Promise<ServerReady>> = {
  service: startService,
  express: startExpress,
  'grpc-floor': startGrpcFloor,
};
const ready = await STARTS[process.argv[2] as ServerKind]();
process.send?.({ ready });
// Asked between runs: the CPU time this process has used so far, in µs.
process.on('message', () => {
  const { user, system } = process.cpuUsage();
  process.send?.({ cpuUs: user + system });
});
