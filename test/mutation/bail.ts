// Ends the run at the first failing test: one failure kills a mutant, so the rest of the suite would only spend
// time. Imported before the test files, so that its hook applies to every test they declare.
import { after, afterEach } from 'node:test';

/** How long the process may live on after the last test: longer means a test left a timer or socket running. */
const EXIT_GRACE_MS = 2_000;

afterEach((t) => {
  if (!('passed' in t) || t.passed) return;
  process.stderr.write(`failed: ${t.name}\n`);
  process.exit(1);
});

// A handle left open would keep every surviving mutant's run alive until it closed, and the timeout Stryker derives
// from the first run with it: fail that first run instead, so the leak is mended rather than paid for per mutant.
after(() => {
  setTimeout(() => {
    process.stderr.write(`the tests left the process running ${EXIT_GRACE_MS} ms after the last one ended\n`);
    process.exit(2);
  }, EXIT_GRACE_MS).unref();
});
