// `npm run bench [-- --quick] [-- --json [file]] [-- section...]`: the sections in one run, with the peers, as tables.
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { type AdaptiveSettings, adaptiveTable, runAdaptive } from './adaptive.js';
import { type ClusterSettings, clusterTable, runCluster } from './cluster.js';
import { type DirectSettings, runDirect, serverTable, throughputTable } from './direct.js';
import { floodTable, runFlood } from './flood.js';
import { type HttpSettings, httpTable, runHttp } from './http.js';
import { type MemorySettings, memoryTable, runMemory } from './memory.js';
import { startBenchRedis } from './redis.js';
import { runService, type ServiceSettings, serviceTable } from './service.js';
import { runShaping, type ShapingSettings, shapingTable } from './shaping.js';
import { renderTable, type Table } from './table.js';
import { evaluateClusterTargets, evaluateServiceTargets, evaluateTargets, targetTable } from './targets.js';
import { runWaiting, type WaitingSettings, waitingTable } from './waiting.js';

interface Settings {
  readonly direct: DirectSettings;
  readonly http: HttpSettings;
  readonly floodMs: number;
  readonly memory: MemorySettings;
  readonly shaping: ShapingSettings;
  readonly waiting: WaitingSettings;
  readonly cluster: ClusterSettings;
  readonly service: ServiceSettings;
  readonly adaptive: AdaptiveSettings;
}

/** About six minutes on 2 cores; `--quick` is a smoke run of every section in about a minute. */
const FULL: Settings = {
  direct: { rounds: 3, memoryMs: 500, redisMs: 1000, warmupMs: 300 },
  http: { rounds: 4, seconds: 3, warmupSeconds: 1, connections: 64 },
  floodMs: 1000,
  memory: { redisKeys: 100_000, heapKeys: [100_000, 1_000_000] },
  shaping: { rounds: 3, memoryMs: 400, redisMs: 800, warmupMs: 200 },
  waiting: { waiters: 1000, pickups: 20 },
  cluster: { rounds: 3, ms: 1000, warmupMs: 500 },
  service: { rounds: 3, seconds: 3, warmupSeconds: 1 },
  adaptive: { seconds: 6, warmupSeconds: 2 },
};
const QUICK: Settings = {
  direct: { rounds: 1, memoryMs: 150, redisMs: 300, warmupMs: 100 },
  http: { rounds: 1, seconds: 1, warmupSeconds: 1, connections: 64 },
  floodMs: 300,
  memory: { redisKeys: 10_000, heapKeys: [10_000, 100_000] },
  shaping: { rounds: 1, memoryMs: 100, redisMs: 200, warmupMs: 100 },
  waiting: { waiters: 200, pickups: 5 },
  cluster: { rounds: 1, ms: 300, warmupMs: 200 },
  service: { rounds: 1, seconds: 1, warmupSeconds: 1 },
  adaptive: { seconds: 2, warmupSeconds: 1 },
};

/**
 * Section names to run alone (`npm run bench -- shaping`); the targets need the first four, the cluster's targets
 * only the cluster section.
 */
const SECTIONS = [
  'direct',
  'http',
  'flood',
  'memory',
  'shaping',
  'waiting',
  'cluster',
  'service',
  'adaptive',
] as const;
type Section = (typeof SECTIONS)[number];

const PACKAGES = [
  'express-rate-limit',
  'rate-limit-redis',
  'rate-limiter-flexible',
  'ioredis',
  'redis',
  'express',
  'autocannon',
  '@grpc/grpc-js',
];

function versionOf(path: string): string {
  return (JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { version: string }).version;
}

function parseArgs(argv: readonly string[]): {
  quick: boolean;
  json: string | undefined;
  sections: ReadonlySet<Section>;
} {
  let quick = false;
  let json: string | undefined;
  const sections = new Set<Section>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') quick = true;
    else if (arg === '--json') {
      const next = argv[i + 1];
      json = next === undefined || next.startsWith('--') ? 'bench/results.json' : next;
      if (json === next) i++;
    } else if ((SECTIONS as readonly string[]).includes(arg as string)) sections.add(arg as Section);
    else
      throw new Error(
        `unknown argument ${arg} (use --quick, --json [file] and section names: ${SECTIONS.join(', ')})`,
      );
  }
  return { quick, json, sections: sections.size === 0 ? new Set(SECTIONS) : sections };
}

async function timed<T>(name: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  process.stderr.write(`[bench] ${name}...`);
  const result = await work();
  process.stderr.write(` ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  return result;
}

const args = process.argv.slice(2);
const { quick, json, sections } = parseArgs(args);
const settings = quick ? QUICK : FULL;
const started = performance.now();
const redis = await startBenchRedis();
try {
  const environment = {
    date: new Date().toISOString(),
    command: `npm run bench${args.length === 0 ? '' : ` -- ${args.join(' ')}`}`,
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    // Other work on the machine shows up in every figure; ratios within one run are what compare.
    loadAverage: loadavg()[0]?.toFixed(2) ?? 'unknown',
    versions: {
      node: process.version,
      'redis-server': redis.version,
      tollgate: versionOf('../package.json'),
      ...Object.fromEntries(
        PACKAGES.map((name) => [name, versionOf(`../node_modules/${name}/package.json`)]),
      ),
    },
  };
  /** A section that was not asked for is undefined, and so are its tables. */
  const section = <T>(name: Section, title: string, work: () => Promise<T>) =>
    sections.has(name) ? timed(title, work) : undefined;
  const direct = await section('direct', '1-2. direct API', () => runDirect(redis, settings.direct));
  const http = await section('http', '3. HTTP', () => runHttp(redis, settings.http));
  const flood = await section('flood', '4. flood', () => runFlood(redis, settings.floodMs));
  const memory = await section('memory', '5. bytes per key', () => runMemory(redis, settings.memory));
  const shaping = await section('shaping', '6. shaping', () => runShaping(redis, settings.shaping));
  const waiting = await section('waiting', '7. waiting', () => runWaiting(redis, settings.waiting));
  // Its own cluster, started and stopped within the section: the single bench server above is not used.
  const cluster = await section('cluster', '8. Redis Cluster', () => runCluster(settings.cluster));
  const service = await section('service', '9. the service', () => runService(settings.service));
  const adaptive = await section('adaptive', '10. adaptive concurrency', () =>
    runAdaptive(settings.adaptive),
  );
  const heapKeys = Math.max(...settings.memory.heapKeys);
  const targets = [
    ...(direct && http && flood && memory ? evaluateTargets({ direct, http, flood, memory }, heapKeys) : []),
    ...(cluster ? evaluateClusterTargets(cluster.measures) : []),
    ...(service ? evaluateServiceTargets(service) : []),
  ];
  const environmentTable: Table = {
    title: 'Environment',
    columns: ['what', 'value'],
    rows: [
      ['command', environment.command],
      ['date', environment.date],
      ['cores', String(environment.cores)],
      ['cpu', environment.cpu],
      ['load average at start (1 min)', environment.loadAverage],
      ...Object.entries(environment.versions).map(([name, version]) => [name, version]),
    ],
  };
  const tables = [
    environmentTable,
    ...(direct ? [throughputTable(direct), serverTable(direct)] : []),
    ...(http ? [httpTable(http, settings.http)] : []),
    ...(flood ? [floodTable(flood, settings.floodMs)] : []),
    ...(memory ? [memoryTable(memory, settings.memory)] : []),
    ...(shaping ? [shapingTable(shaping)] : []),
    ...(waiting ? [waitingTable(waiting, settings.waiting)] : []),
    ...(cluster ? [clusterTable(cluster, settings.cluster)] : []),
    ...(service ? [serviceTable(service, settings.service)] : []),
    ...(adaptive ? [adaptiveTable(adaptive, settings.adaptive)] : []),
    ...(targets.length > 0 ? [targetTable(targets)] : []),
  ];
  process.stdout.write(`${tables.map(renderTable).join('\n')}\n`);
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`[bench] done in ${seconds.toFixed(0)} s\n`);
  if (json !== undefined) {
    const strip = (value: unknown) =>
      JSON.parse(JSON.stringify(value, (key, v) => (key === 'contender' ? undefined : v)));
    writeFileSync(
      json,
      `${JSON.stringify({ environment, settings, seconds, tables, targets, results: strip({ direct, http, flood, memory, shaping, waiting, cluster, service, adaptive }) }, null, 2)}\n`,
    );
    process.stderr.write(`[bench] JSON written to ${json}\n`);
  }
} finally {
  await redis.stop();
}
