// Section 9: `tollgate serve` answering Envoy's gRPC calls and the HTTP check, beside the Express adapter in-process.
import { execFile, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadSync } from '@grpc/proto-loader';
import { KEYS } from './direct.js';
import { loadGenerator } from './http.js';
import type { LoadReply } from './http-load.js';
import { collectGarbage } from './load.js';
import type { ServerKind, ServerReady } from './service-server.js';
import { count, fixed, median, ratio, type Table } from './table.js';

export interface ServiceSettings {
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
}

export interface ServiceMeasure {
  readonly name: string;
  readonly inFlight: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The server process's CPU time per decision, in µs. */
  readonly cpuUs: number;
  readonly failures: number;
}

export const GRPC = 'gRPC ShouldRateLimit (tollgate serve)';
const CHECK = 'HTTP GET /check (tollgate serve)';
export const EXPRESS = 'Express adapter, in-process';
const GRPC_FLOOR = 'gRPC, grpc-js alone (fixed answer, no decision)';
const IN_FLIGHT = [1, 64] as const;
/** The client the gRPC runs use: nghttp2's load generator, in C like Envoy, so the client is not what is measured. */
const H2LOAD = 'h2load';

const run = promisify(execFile);

/** A server in a child process, which answers a message with the CPU time it has used. */
async function startServer(kind: ServerKind) {
  const child = fork(new URL('./service-server.ts', import.meta.url), [kind], {
    execArgv: ['--import', 'tsx'],
  });
  const ready = await new Promise<ServerReady>((resolve, reject) => {
    child.once('message', (message: { ready: ServerReady }) => resolve(message.ready));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
  return {
    ready,
    cpuUs: () =>
      new Promise<number>((resolve) => {
        child.once('message', (message: { cpuUs: number }) => resolve(message.cpuUs));
        child.send('cpu');
      }),
    stop: () => child.kill(),
  };
}

/** One ShouldRateLimit request framed for the wire (flag byte, length, message), encoded by protobufjs. */
function grpcFrame(): Buffer {
  const proto = fileURLToPath(new URL('../proto/', import.meta.url));
  const definition = loadSync('envoy/service/ratelimit/v3/rls.proto', { includeDirs: [proto] });
  const service = definition['envoy.service.ratelimit.v3.RateLimitService'] as unknown as {
    ShouldRateLimit: { requestSerialize(value: object): Buffer };
  };
  const method = service.ShouldRateLimit;
  const message = method.requestSerialize({
    domain: 'bench',
    descriptors: [{ entries: [{ key: 'remote_address', value: '10.0.0.1' }] }],
  });
  const header = Buffer.alloc(5);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

/** Whether nghttp2's h2load is installed (Debian's nghttp2-client): without it the gRPC rows are left out. */
async function hasH2load(): Promise<boolean> {
  try {
    await run(H2LOAD, ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** `seconds` of calls with `inFlight` streams on one connection; latencies from h2load's per-request log. */
async function grpcLoad(port: number, inFlight: number, seconds: number, frame: Buffer): Promise<LoadReply> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-h2load-'));
  try {
    const body = join(dir, 'request.bin');
    const log = join(dir, 'log.tsv');
    writeFileSync(body, frame);
    await run(H2LOAD, [
      ...['-D', String(seconds), '-c', '1', '-m', String(inFlight), '-t', '1', '-d', body],
      ...['-H', 'content-type: application/grpc', '-H', 'te: trailers', '--log-file', log],
      `http://127.0.0.1:${port}/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit`,
    ]);
    // Each line: start (µs since the epoch), HTTP status, µs until the response ended.
    const rows = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    const latencies = rows.map((row) => Number(row[2]) / 1000).sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? Number.NaN;
    return {
      rps: rows.length / seconds,
      p50Ms: at(0.5),
      p95Ms: at(0.95),
      p99Ms: at(0.99),
      non2xx: rows.filter((row) => row[1] !== '200').length,
      errors: 0,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Subject {
  readonly name: string;
  readonly kind: ServerKind;
  load(ready: ServerReady, inFlight: number, seconds: number): Promise<LoadReply>;
}

export async function runService(settings: ServiceSettings): Promise<ServiceMeasure[]> {
  const http = loadGenerator();
  const autocannon = (path: string) => (ready: ServerReady, inFlight: number, seconds: number) => {
    const url = `http://127.0.0.1:${ready.httpPort}${path}`;
    return http.run({ url, connections: inFlight, seconds, keys: KEYS });
  };
  const frame = grpcFrame();
  const grpc = (ready: ServerReady, inFlight: number, seconds: number) =>
    grpcLoad(ready.grpcPort as number, inFlight, seconds, frame);
  const subjects: Subject[] = [
    ...((await hasH2load())
      ? [
          { name: GRPC_FLOOR, kind: 'grpc-floor' as const, load: grpc },
          { name: GRPC, kind: 'service' as const, load: grpc },
        ]
      : []),
    { name: CHECK, kind: 'service', load: autocannon('/check') },
    { name: EXPRESS, kind: 'express', load: autocannon('/') },
  ];
  const measures: ServiceMeasure[] = [];
  try {
    for (const subject of subjects) {
      const server = await startServer(subject.kind);
      try {
        for (const inFlight of IN_FLIGHT) {
          await subject.load(server.ready, inFlight, settings.warmupSeconds);
          const runs: { reply: LoadReply; cpuUs: number }[] = [];
          for (let round = 0; round < settings.rounds; round++) {
            collectGarbage();
            const before = await server.cpuUs();
            const reply = await subject.load(server.ready, inFlight, settings.seconds);
            const used = (await server.cpuUs()) - before;
            runs.push({ reply, cpuUs: used / (reply.rps * settings.seconds) });
          }
          const of = (pick: (r: { reply: LoadReply; cpuUs: number }) => number) => median(runs.map(pick));
          measures.push({
            name: subject.name,
            inFlight,
            perSecond: of((r) => r.reply.rps),
            p50Ms: of((r) => r.reply.p50Ms),
            p99Ms: of((r) => r.reply.p99Ms),
            cpuUs: of((r) => r.cpuUs),
            failures: runs.reduce((sum, r) => sum + r.reply.non2xx + r.reply.errors, 0),
          });
        }
      } finally {
        server.stop();
      }
    }
  } finally {
    http.stop();
  }
  return measures;
}

export function serviceTable(measures: readonly ServiceMeasure[], settings: ServiceSettings): Table {
  const express = (inFlight: number) => measures.find((m) => m.name === EXPRESS && m.inFlight === inFlight);
  return {
    title: `9. The service: decisions over loopback, MemoryStore (rounds of ${settings.seconds} s, medians)`,
    columns: [
      'server',
      'in flight',
      'decisions/s',
      'p50 ms',
      'p99 ms',
      'server CPU µs/decision',
      'CPU vs Express',
      'failed',
    ],
    rows: measures.map((m) => [
      m.name,
      String(m.inFlight),
      count(m.perSecond),
      fixed(m.p50Ms, 2),
      fixed(m.p99Ms, 2),
      fixed(m.cpuUs, 1),
      ratio(m.cpuUs / (express(m.inFlight)?.cpuUs ?? Number.NaN)),
      count(m.failures),
    ]),
    notes: [
      'Each server runs in a process of its own; its CPU time over a run, divided by the decisions answered, is the',
      'cost of one decision. gRPC calls come from h2load (nghttp2, in C like Envoy) as streams on one HTTP/2',
      'connection, each the same descriptor; the HTTP check and Express from autocannon over that many connections,',
      `each request from one of ${count(KEYS)} clients in X-Forwarded-For. No quota is reached. 2 cores: the load`,
      'generator and the server share them, so the figures at 64 in flight are bounded by the machine too. The',
      'grpc-js row is the transport alone: at 64 in flight no gRPC figure can beat it, and a p99 under 2 ms there',
      'would need 32,000 calls a second (64 / 2 ms) on the one core the server has.',
    ],
  };
}
