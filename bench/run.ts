// `npm run bench [-- --quick] [-- --json [file]]`: every section in one run, with the peers, printed as tables.
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { type DirectSettings, runDirect, serverTable, throughputTable } from './direct.js';
import { floodTable, runFlood } from './flood.js';
import { type HttpSettings, httpTable, runHttp } from './http.js';
import { type MemorySettings, memoryTable, runMemory } from './memory.js';
import { startBenchRedis } from './redis.js';
import { renderTable, type Table } from './table.js';
import { evaluateTargets, targetTable } from './targets.js';

interface Settings {
  readonly direct: DirectSettings;
  readonly http: HttpSettings;
  readonly floodMs: number;
  readonly memory: MemorySettings;
}

/** About four minutes on 2 cores; `--quick` is a smoke run of every section in well under one. */
const FULL: Settings = {
  direct: { rounds: 3, memoryMs: 500, redisMs: 1000, warmupMs: 300 },
  http: { rounds: 4, seconds: 3, warmupSeconds: 1, connections: 64 },
  floodMs: 1000,
  memory: { redisKeys: 100_000, heapKeys: [100_000, 1_000_000] },
};
const QUICK: Settings = {
  direct: { rounds: 1, memoryMs: 150, redisMs: 300, warmupMs: 100 },
  http: { rounds: 1, seconds: 1, warmupSeconds: 1, connections: 64 },
  floodMs: 300,
  memory: { redisKeys: 10_000, heapKeys: [10_000, 100_000] },
};

const PACKAGES = [
  'express-rate-limit',
  'rate-limit-redis',
  'rate-limiter-flexible',
  'ioredis',
  'redis',
  'express',
  'autocannon',
];

function versionOf(path: string): string {
  return (JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { version: string }).version;
}

function parseArgs(argv: readonly string[]): { quick: boolean; json: string | undefined } {
  let quick = false;
  let json: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') quick = true;
    else if (arg === '--json') {
      const next = argv[i + 1];
      json = next === undefined || next.startsWith('--') ? 'bench/results.json' : next;
      if (json === next) i++;
    } else throw new Error(`unknown argument ${arg} (use --quick and/or --json [file])`);
  }
  return { quick, json };
}

async function timed<T>(name: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  process.stderr.write(`[bench] ${name}...`);
  const result = await work();
  process.stderr.write(` ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  return result;
}

const { quick, json } = parseArgs(process.argv.slice(2));
const settings = quick ? QUICK : FULL;
const started = performance.now();
const redis = await startBenchRedis();
try {
  const environment = {
    date: new Date().toISOString(),
    command: `npm run bench${quick ? ' -- --quick' : ''}`,
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
  const direct = await timed('1-2. direct API', () => runDirect(redis, settings.direct));
  const http = await timed('3. HTTP', () => runHttp(redis, settings.http));
  const flood = await timed('4. flood', () => runFlood(redis, settings.floodMs));
  const memory = await timed('5. bytes per key', () => runMemory(redis, settings.memory));
  const heapKeys = Math.max(...settings.memory.heapKeys);
  const targets = evaluateTargets({ direct, http, flood, memory }, heapKeys);
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
    throughputTable(direct),
    serverTable(direct),
    httpTable(http, settings.http),
    floodTable(flood, settings.floodMs),
    memoryTable(memory, settings.memory),
    targetTable(targets),
  ];
  process.stdout.write(`${tables.map(renderTable).join('\n')}\n`);
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`[bench] done in ${seconds.toFixed(0)} s\n`);
  if (json !== undefined) {
    const strip = (value: unknown) =>
      JSON.parse(JSON.stringify(value, (key, v) => (key === 'contender' ? undefined : v)));
    writeFileSync(
      json,
      `${JSON.stringify({ environment, settings, seconds, tables, targets, results: strip({ direct, http, flood, memory }) }, null, 2)}\n`,
    );
    process.stderr.write(`[bench] JSON written to ${json}\n`);
  }
} finally {
  await redis.stop();
}
