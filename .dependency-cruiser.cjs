// The import rules of the library's layers, checked in CI by `npm run check:layers` (type-only imports included).
// Layers, bottom up: the foundation (errors, integers, durations, option checks, the logger and identity types),
// the policies, then the core (limiter, decisions, headers, keys, identities, stores) beside the simulation (which
// runs only the policies), the gate, the edges (adapters, admin, metrics, otel: none imports another), the
// simulator's server, and the CLI on top. Each layer imports only those below it.

const FOUNDATION = '^src/(errors|integer|duration|validate|logger)\\.ts$|^src/identity/identity\\.ts$';
const CORE =
  '^src/(decision|decision-outcome|headers|key|lease|limiter|limiter-checks|observability|rate-limit-info|refund-spend|shared-scope|sleep|tiers|wait|wait-line)\\.ts$|^src/(policies|stores|identity)/';
/** The gate and its helpers: what every adapter shares. */
const GATE = '^src/gate(-completion|-options|-response|-throw)?\\.ts$';
const ABOVE_THE_CORE = `^src/(index\\.ts|adapters/|admin/|metrics/|otel/|simulation/|simulator/|cli)|${GATE}`;
// Matched on resolved paths, so type-only imports (resolved to @types packages) count too.
const FRAMEWORKS =
  'node_modules/(@types/)?(express|fastify|fastify-plugin|hono|koa|@hono/[^/]+|@nestjs/[^/]+)/';
const REDIS_CLIENTS = 'node_modules/(@types/)?(ioredis|redis|@redis/[^/]+)/';

/** A rule that `from` imports nothing matching `to`. */
function forbid(name, comment, from, to) {
  return { name, comment, severity: 'error', from, to };
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
      'foundation-is-the-floor',
      'The foundation modules are imported by every layer, so they import no other library module.',
      { path: FOUNDATION },
      { path: '^src/', pathNot: FOUNDATION },
    ),
    forbid(
      'policies-import-nothing-above',
      'A policy is a pure transition: it needs the foundation and other policies, nothing that runs it.',
      { path: '^src/policies/' },
      { path: '^src/', pathNot: `^src/policies/|${FOUNDATION}` },
    ),
    forbid(
      'core-imports-no-edge',
      'The core knows no gate, adapter, admin, metrics, simulation, simulator or CLI: they are built on it.',
      { path: CORE },
      { path: ABOVE_THE_CORE },
    ),
    forbid(
      'simulation-runs-only-the-policies',
      "The offline simulation runs the policies' own transitions and needs nothing else of the library.",
      { path: '^src/simulation/' },
      { path: '^src/', pathNot: `^src/(simulation|policies)/|${FOUNDATION}` },
    ),
    forbid(
      'gate-imports-only-the-core',
      'The gate is what every adapter shares; it must not depend on any of them or on the tools beside them.',
      { path: GATE },
      { path: ABOVE_THE_CORE, pathNot: GATE },
    ),
    forbid(
      'adapters-import-no-other-edge',
      'An adapter translates one framework onto the gate, and nothing else.',
      { path: '^src/adapters/' },
      { path: '^src/(index\\.ts|admin/|metrics/|otel/|simulation/|simulator/|cli)' },
    ),
    forbid(
      'operations-tools-import-no-other-edge',
      'Operations tools (admin, Prometheus and OpenTelemetry metrics) sit beside the adapters, each usable alone.',
      { path: '^src/(admin|metrics|otel)/' },
      {
        path: '^src/(index\\.ts|adapters/|simulation/|simulator/|cli|admin/|metrics/|otel/)',
        pathNot: '^src/$1/',
      },
    ),
    forbid(
      'simulator-below-the-cli',
      "The simulator's server uses the simulation and the node:http adapter; only the CLI starts it.",
      { path: '^src/simulator/' },
      { path: '^src/(index\\.ts|admin/|metrics/|otel/|cli)' },
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
      'The core and the in-memory store load without the Redis engine.',
      { path: '^src/', pathNot: '^src/stores/redis/' },
      { path: '^src/stores/redis/' },
    ),
    forbid(
      'prom-client-only-in-metrics',
      'Prometheus is opt-in through tollgate/metrics.',
      { path: '^src/', pathNot: '^src/metrics/' },
      { path: 'node_modules/prom-client/' },
    ),
    forbid(
      'opentelemetry-only-in-otel',
      'OpenTelemetry is opt-in through tollgate/otel.',
      { path: '^src/', pathNot: '^src/otel/' },
      { path: 'node_modules/@opentelemetry/' },
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
