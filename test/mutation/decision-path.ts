// The tests mutation testing runs for every mutant: those covering the decision path, in one process for speed.
// Stryker's command runner judges a mutant by this process's exit code: 1 at the first failing test (bail.ts).
// Fast tests with exact expectations come first, so most mutants die within the first few hundred milliseconds.
import './bail.js';
import '../unit/headers.test.js';
import '../unit/decision.test.js';
import '../unit/deny-cache.test.js';
import '../unit/cluster-slot.test.js';
import '../unit/circuit-breaker.test.js';
import '../unit/integer.test.js';
import '../unit/lua-twins.test.js';
import '../policies/token-bucket.test.js';
import '../policies/fixed-window.test.js';
import '../policies/sliding-window.test.js';
import '../policies/sliding-window-counter.test.js';
import '../policies/limiter.test.js';
import '../contract/memory-store.test.js';
import '../policies/scale.test.js';
import '../unit/key.test.js';
import '../policies/policy-options.test.js';
import '../policies/limiter-options.test.js';
import '../policies/memory-store.test.js';
import '../unit/bucket-pool.test.js';
import '../unit/retention-cap.test.js';
import '../policies/retention.test.js';
import '../policies/properties.test.js';
