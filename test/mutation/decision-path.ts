// The tests mutation testing runs for every mutant: those covering the decision path, in one process for speed.
// Stryker's command runner judges a mutant by this process's exit code: 1 at the first failing test (bail.ts).
// Fast tests with exact expectations come first, so most mutants die within the first few hundred milliseconds.
import './bail.js';
import '../unit/headers.test.js';
import '../unit/headers-lists.test.js';
import '../unit/headers-legacy.test.js';
import '../unit/headers-express-rate-limit.test.js';
import '../unit/decision.test.js';
import '../stores/redis-deny-cache.test.js';
import '../stores/redis-cluster-slot.test.js';
import '../stores/redis-circuit-breaker.test.js';
import '../unit/integer.test.js';
import '../policies/lua-twins.test.js';
import '../policies/token-bucket.test.js';
import '../policies/fixed-window.test.js';
import '../policies/sliding-window.test.js';
import '../policies/sliding-window-counter.test.js';
import '../policies/refund.test.js';
import '../policies/lockout.test.js';
import '../policies/concurrency.test.js';
import '../policies/evaluate-actions.test.js';
import '../policies/limiter.test.js';
import '../stores/memory-store-contract.test.js';
import '../policies/scale.test.js';
import '../unit/key.test.js';
import '../policies/policy-options.test.js';
import '../policies/limiter-options.test.js';
import '../policies/limiter-shaping.test.js';
import '../policies/wait.test.js';
import '../policies/wait-line.test.js';
import '../policies/refund-provenance.test.js';
import '../stores/memory-store.test.js';
import '../stores/store-stats.test.js';
import '../stores/bucket-pool.test.js';
import '../stores/retention-cap.test.js';
import '../stores/memory-store-retention.test.js';
import '../policies/properties.test.js';
