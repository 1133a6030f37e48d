// The import rules of the library's layers, checked in CI by `npm run check:layers` (type-only imports included).
// Bottom up: core, policies, stores, identity, decision, limiter, gate; above them the edges (adapters, admin,
// telemetry), the contract suites (testing), the simulator's engine (on the policies alone) and server, the main
// entry, and the CLI on top.
// Layers are folders: a module's layer is the folder it is put in, so a new file lands in one by where it goes.
const LAYERS = [
  [
    'core',
    [],
    'Errors, integers, durations, option checks, the logger: imported by every layer, importing none.',
  ],
  [
    'policies',
    ['core'],
    'A policy is a pure transition: it needs the core and other policies, nothing that runs it.',
  ],
  [
    'stores',
    ['core', 'policies'],
    'A store runs the policies on its state; it knows no limiter, gate or edge.',
  ],
  ['identity', ['core', 'stores'], 'Who a request is: hashing and parsing only, below every caller.'],
  [
    'adaptive',
    ['core', 'policies'],
    'Adaptive limits move with latency in this process: the algorithms, the local policy and its simulation need no store.',
  ],
  [
    'decision',
    ['core', 'policies', 'stores'],
    'What a decision says and the headers it makes, from store results.',
  ],
  [
    'limiter',
    ['core', 'policies', 'stores', 'decision'],
    'The limiter: keys, waits, leases and refunds over a store, with no request in sight.',
  ],
  [
    'gate',
    ['core', 'policies', 'stores', 'identity', 'decision', 'limiter'],
    'The gate is what every adapter shares; it must not depend on any of them or on the tools beside them.',
  ],
  [
    'adapters',
    ['core', 'policies', 'stores', 'identity', 'decision', 'limiter', 'gate'],
    'An adapter translates one framework onto the gate, and nothing else.',
  ],
  [
    'admin',
    ['core', 'policies', 'stores', 'identity', 'decision', 'limiter'],
    'The admin endpoints sit beside the adapters, usable alone.',
  ],
  [
    'telemetry',
    ['core', 'stores', 'decision', 'gate', 'adaptive'],
    'Prometheus and OpenTelemetry read decisions and store figures; nothing of the library depends on them.',
  ],
  [
    'testing',
    ['core', 'policies', 'stores', 'decision', 'limiter', 'gate'],
    "The store and adapter contracts, run by their authors' tests: they use the library like an app would.",
  ],
  [
    'simulator/engine',
    ['core', 'policies'],
    "The offline simulation runs the policies' own transitions and needs nothing else of the library.",
  ],
  [
    'simulator/server',
    ['core', 'policies', 'stores', 'decision', 'limiter', 'adapters/node', 'simulator/engine', 'adaptive'],
    "The simulator's server uses the simulation and the node:http adapter; only the CLI starts it.",
  ],
  [
    'service',
    ['core', 'policies', 'stores', 'identity', 'decision', 'limiter'],
    "The rate limit service speaks the gateways' protocols over limiters; it is given its store, so it loads no Redis.",
  ],
];
const folder = (name) => `^src/${name}/`;
const EVERY_LAYER = LAYERS.map(([name]) => folder(name)).join('|');
/** The two modules at the root: the package's main entry (above every layer but the CLI) and the command. */
const ENTRIES = '^src/(index|cli)\\.ts$';
// Matched on resolved paths, so type-only imports (resolved to @types packages) count too.
const FRAMEWORKS =
  'node_modules/(@types/)?(express|fastify|fastify-plugin|hono|koa|@hono/[^/]+|@nestjs/[^/]+)/';
const REDIS_CLIENTS = 'node_modules/(@types/)?(ioredis|redis|@redis/[^/]+)/';

/** A rule that `from` imports nothing matching `to`. */
function forbid(name, comment, from, to) {
  return { name, comment, severity: 'error', from, to };
}

/** A layer imports its own folder and the layers it names, nothing else of src/. */
function layer([name, below, comment]) {
  const allowed = [name, ...below].map(folder).join('|');
  return forbid(
    `${name.replace('/', '-')}-imports-only-below`,
    comment,
    { path: folder(name) },
    { path: '^src/', pathNot: allowed },
  );
}

module.exports = {
  forbidden: [
    forbid(
      'no-cycles',
      'A cycle makes load order matter and every module of it a single unit to read and test.',
      {},
      { circular: true },
    ),
    forbid(
      'every-module-in-a-layer',
      "A module outside every layer's folder is held to no rule: put it in the folder of its layer.",
      { path: '^src/', pathNot: `${EVERY_LAYER}|${ENTRIES}|^src/cli/` },
      { path: '^src/' },
    ),
    ...LAYERS.map(layer),
    forbid(
      'the-main-entry-imports-no-edge-tool',
      'The main entry is the application API: each edge tool is its own subpath, paid for only when imported.',
      { path: '^src/index\\.ts$' },
      { path: '^src/(adapters|admin|telemetry|simulator|testing|service|cli)/' },
    ),
    forbid(
      'nothing-imports-the-testing-kit',
      'tollgate/testing loads node:test and node:assert: only test code imports it, never the library.',
      { path: '^src/', pathNot: '^src/testing/' },
      { path: '^src/testing/' },
    ),
    forbid(
      'nothing-imports-the-main-entry',
      'Every module imports the one it needs, so the main entry loads nothing twice and stays a list of exports.',
      { path: '^src/' },
      { path: ENTRIES },
    ),
    forbid(
      'adapters-import-no-other-adapter',
      'Each adapter stands alone: loading one framework never loads another.',
      { path: '^src/adapters/([^/]+)/' },
      { path: '^src/adapters/', pathNot: '^src/adapters/$1/' },
    ),
    forbid(
      'telemetry-exporters-stand-alone',
      'Prometheus and OpenTelemetry each work alone; they share only the description of the instruments.',
      { path: '^src/telemetry/(prometheus|otel)/' },
      { path: '^src/telemetry/(prometheus|otel)/', pathNot: '^src/telemetry/$1/' },
    ),
    forbid(
      'only-the-command-imports-the-cli',
      'src/cli/ holds the pieces of the `tollgate` command; nothing of the library depends on them.',
      { path: '^src/', pathNot: '^src/cli(\\.ts$|/)' },
      { path: '^src/cli/' },
    ),
    forbid(
      'core-imports-no-framework',
      'Only the adapters (and the Express mounting of the admin endpoints) know a web framework.',
      { path: '^src/', pathNot: '^src/adapters/|^src/admin/express\\.ts$' },
      { path: FRAMEWORKS },
    ),
    forbid(
      'nestjs-adapter-knows-no-platform',
      'tollgate/nestjs runs on whichever Nest platform the app chose: it reaches the response through Nest alone.',
      { path: '^src/' },
      { path: 'node_modules/@nestjs/platform-' },
    ),
    forbid(
      'redis-client-only-in-the-redis-store',
      'Redis clients are optional peers: only tollgate/redis may reach one, and only on demand.',
      { path: '^src/', pathNot: '^src/stores/redis/' },
      { path: REDIS_CLIENTS },
    ),
    forbid(
      'core-imports-no-redis-store',
      'The core and the in-memory store load without the Redis engine; the command builds the store its environment names.',
      { path: '^src/', pathNot: '^src/stores/redis/|^src/cli/' },
      { path: '^src/stores/redis/' },
    ),
    forbid(
      'prom-client-only-in-metrics',
      'Prometheus is opt-in through tollgate/metrics.',
      { path: '^src/', pathNot: '^src/telemetry/prometheus/' },
      { path: 'node_modules/prom-client/' },
    ),
    forbid(
      'opentelemetry-only-in-otel',
      'OpenTelemetry is opt-in through tollgate/otel.',
      { path: '^src/', pathNot: '^src/telemetry/otel/' },
      { path: 'node_modules/@opentelemetry/' },
    ),
    forbid(
      'grpc-and-yaml-only-in-the-service',
      'gRPC and YAML are optional peers that only tollgate/service loads, and only on demand.',
      { path: '^src/', pathNot: '^src/service/' },
      { path: 'node_modules/(@grpc/[^/]+|yaml)/' },
    ),
    forbid(
      'library-never-imports-the-demo',
      'demo/, test/ and bench/ are not shipped: a library import of them breaks every install.',
      { path: '^src/' },
      { path: '^(demo|test|bench|scripts)/' },
    ),
    forbid(
      'library-imports-only-declared-packages',
      'A package the library loads must be a dependency or a declared peer, or installs break.',
      { path: '^src/' },
      {
        dependencyTypes: ['npm-dev', 'npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['npm-peer', 'npm-optional'],
      },
    ),
    forbid(
      'no-unresolvable',
      'An import that resolves to nothing fails at load time.',
      {},
      { couldNotResolve: true },
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.d.ts'],
    },
  },
};
