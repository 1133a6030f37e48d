// Ends the run at the first failing test: one failure kills a mutant, so the rest of the suite would only spend
// time. Imported before the test files, so that its hook applies to every test they declare.
import { afterEach } from 'node:test';

afterEach((t) => {
  if (!('passed' in t) || t.passed) return;
  process.stderr.write(`failed: ${t.name}\n`);
  process.exit(1);
});
