// The import rules of the library's layers, checked in CI by `npm run check:layers` (type-only imports included).
// Layers, bottom up: the foundation (errors, integers, durations, option checks, the logger and identity types),
// the policies, the core (limiter, decisions, headers, keys, identities, stores), the gate, then the edges
// (adapters, admin, metrics, simulation, simulator, CLI). Each layer imports only those below it.

const FOUNDATION = '^src/(errors|integer|duration|validate|logger)\\.ts$|^src/identity/identity\\.ts$';
const CORE =
  '^src/(decision|decision-outcome|headers|key|limiter|shared-scope|tiers)\\.ts$|^src/(policies|stores|identity)/';
// Matched on resolved paths, so type-only imports (resolved to @types packages) count too.
const FRAMEWORKS = 'node_modules/(@types/)?(express|fastify|fastify-plugin|hono|koa|@hono/[^/]+)/';
const REDIS_CLIENTS = 'node_modules/(@types/)?(ioredis|redis|@redis/[^/]+)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A cycle makes load order matter and every module of it a single unit to read and test.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'foundation-is-the-floor',
      comment: 'The foundation modules are imported by every layer, so they import no other library module.',
      severity: 'error',
      from: { path: FOUNDATION },
      to: { path: '^src/', pathNot: FOUNDATION },
    },
    {
      name: 'policies-import-nothing-above',
      comment:
        'A policy is a pure transition: it needs the foundation and other policies, nothing that runs it.',
      severity: 'error',
      from: { path: '^src/policies/' },
      to: { path: '^src/', pathNot: `^src/policies/|${FOUNDATION}` },
    },
    {
      name: 'core-imports-no-edge',
      comment: 'The core knows no gate, adapter, admin, metrics, simulator or CLI: they are built on it.',
      severity: 'error',
      from: { path: CORE },
      to: { path: '^src/(gate\\.ts|adapters/|admin/|metrics/|simulation/|simulator/|cli)' },
    },
    {
      name: 'stores-import-no-gate-or-adapter',
      comment: 'A store answers the limiter; the request layer above it may change without touching a store.',
      severity: 'error',
      from: { path: '^src/stores/' },
      to: { path: '^src/(gate\\.ts|limiter\\.ts|adapters/|admin/|metrics/)' },
    },
    {
      name: 'core-imports-no-framework',
      comment: 'Only the adapters (and the Express mounting of the admin endpoints) know a web framework.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/adapters/|^src/admin/express\\.ts$' },
      to: { path: FRAMEWORKS },
    },
    {
      name: 'redis-client-only-in-the-redis-store',
      comment: 'Redis clients are optional peers: only tollgate/redis may reach one, and only on demand.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/stores/redis/' },
      to: { path: REDIS_CLIENTS },
    },
    {
      name: 'core-imports-no-redis-store',
      comment: 'The core and the in-memory store load without the Redis engine.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/stores/redis/' },
      to: { path: '^src/stores/redis/' },
    },
    {
      name: 'prom-client-only-in-metrics',
      comment: 'Prometheus is opt-in through tollgate/metrics.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/metrics/' },
      to: { path: 'node_modules/prom-client/' },
    },
    {
      name: 'library-never-imports-the-demo',
      comment: 'demo/ is not shipped: a library import of it breaks every install.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(demo|test|bench)/' },
    },
    {
      name: 'library-imports-no-dev-dependency',
      comment: 'A package the library loads must be a dependency or a declared peer, or installs break.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['npm-peer', 'npm-optional'] },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that resolves to nothing fails at load time.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
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
