// `tollgate serve` as the installed package runs it: refused without its optional peers, then, with them, an HTTP
// check and a gRPC call through Envoy's protocol (the proto files the tarball ships), limited exactly, and its drain.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstLine, node } from './install-project.js';

/** The optional peers the service loads, which an install of the library alone does not bring. */
export const SERVICE_PEERS = ['@grpc/grpc-js', 'yaml'];

const LIMIT = 3;
const CONFIG = `domain: install
descriptors:
  - key: remote_address
    rate_limit: { unit: year, requests_per_unit: ${LIMIT} }
tollgate:
  http_check:
    descriptors:
      - entries:
          - remote_address: {}
`;

/**
 * A gRPC client of the project's own @grpc/grpc-js and @grpc/proto-loader (grpc-js's dependency), with the proto
 * files from the installed tarball: the codes of LIMIT + 1 calls for one client, printed as JSON.
 */
const GRPC_CLIENT = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const grpc = require('@grpc/grpc-js');
const loader = require('@grpc/proto-loader');
const includeDirs = [new URL('./node_modules/tollgate/proto/', import.meta.url).pathname];
const definition = loader.loadSync('envoy/service/ratelimit/v3/rls.proto', { includeDirs, enums: String });
const { RateLimitService } = grpc.loadPackageDefinition(definition).envoy.service.ratelimit.v3;
const client = new RateLimitService('127.0.0.1:' + process.argv[2], grpc.credentials.createInsecure());
const request = { domain: 'install', descriptors: [{ entries: [{ key: 'remote_address', value: '192.0.2.7' }] }] };
const codes = [];
for (let i = 0; i <= ${LIMIT}; i++) {
  codes.push(await new Promise((resolve, reject) =>
    client.ShouldRateLimit(request, (error, answer) => (error ? reject(error) : resolve(answer.overallCode)))));
}
client.close();
process.stdout.write(JSON.stringify(codes));
`;

/** `tollgate serve` without its optional peers: exit 1, naming both packages to install. */
export function serveNamesMissingPeer(project: string): { ok: boolean; output: string } {
  const dir = configDir(project);
  const bin = join(project, 'node_modules', '.bin', 'tollgate');
  const result = node(project, [bin, 'serve', '--config', dir, '--grpc-port', '0', '--http-port', '0']);
  const named = result.output.includes('npm install @grpc/grpc-js yaml');
  return { ok: result.status === 1 && named, output: result.output };
}

/**
 * With the peers installed: `tollgate serve` started on free ports, LIMIT + 1 HTTP checks and gRPC calls from two
 * clients each limited at LIMIT, then SIGTERM and exit 0. What failed, if anything.
 */
export async function serviceProblems(project: string): Promise<string[]> {
  const bin = join(project, 'node_modules', '.bin', 'tollgate');
  const args = ['serve', '--config', configDir(project), '--grpc-port', '0', '--http-port', '0', '--json'];
  const child: ChildProcess = spawn(bin, args, { cwd: project });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const problems: string[] = [];
  try {
    const { grpcPort, httpPort } = JSON.parse(await firstLine(child, 'its ports')) as {
      grpcPort: number;
      httpPort: number;
    };
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) {
      const answer = await fetch(`http://127.0.0.1:${httpPort}/check`, {
        headers: { 'x-forwarded-for': '198.51.100.9' },
      });
      statuses.push(answer.status);
    }
    const expected = [...Array(LIMIT).fill(200), 429];
    if (statuses.join() !== expected.join()) problems.push(`GET /check answered ${statuses.join(', ')}`);
    writeFileSync(join(project, 'rls-client.mjs'), GRPC_CLIENT);
    const grpc = node(project, ['rls-client.mjs', String(grpcPort)]);
    const codes = [...Array(LIMIT).fill('OK'), 'OVER_LIMIT'];
    if (grpc.status !== 0 || grpc.output.trim() !== JSON.stringify(codes))
      problems.push(`gRPC ShouldRateLimit answered ${grpc.output.trim()}`);
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
  } finally {
    child.kill('SIGTERM');
  }
  const code = await exit;
  if (code !== 0) problems.push(`exited ${code} on SIGTERM`);
  return problems;
}

function configDir(project: string): string {
  const dir = join(project, 'limits');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'install.yaml'), CONFIG);
  return dir;
}
