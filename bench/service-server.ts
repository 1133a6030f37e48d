// The servers the service section measures, each in a process of its own so that its CPU time is its alone.
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { rateLimit } from '../src/adapters/express/express.js';
import { MemoryStore } from '../src/index.js';
import { createRateLimitService } from '../src/service/index.js';

/** A quota never reached: the section measures the path of an admission. */
export const LIMIT = 1_000_000;

export type ServerKind = 'service' | 'express';

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

const kind = process.argv[2] as ServerKind;
const ready = await (kind === 'service' ? startService() : startExpress());
process.send?.({ ready });
// Asked between runs: the CPU time this process has used so far, in µs.
process.on('message', () => {
  const { user, system } = process.cpuUsage();
  process.send?.({ cpuUs: user + system });
});
