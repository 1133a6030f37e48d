// The extension examples of docs/extending.md, a custom store and adapter, run in the installed project against
// tollgate/testing's contracts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { check, node, ROOT, tail } from './install-project.js';

/**
 * The page whose examples, a custom store and a custom adapter with their tests, run in the project as written:
 * each is a `js` block whose first line is `// <file>.js: <what it is>`.
 */
const EXAMPLES_PAGE = 'docs/extending.md';
/** The contract suites the examples' tests must have run, by the name each prefixes its tests with. */
const CONTRACTS = ['store contract: ', 'adapter contract: '];

/** The example files of EXAMPLES_PAGE, by file name. */
function examples(): Map<string, string> {
  const page = readFileSync(join(ROOT, EXAMPLES_PAGE), 'utf8');
  const files = new Map<string, string>();
  for (const [, code = '', file = ''] of page.matchAll(
    /^```js\n(\/\/ ([\w.-]+\.js): [^\n]*\n[\s\S]*?)^```$/gm,
  ))
    files.set(file, code);
  return files;
}

/**
 * Writes the examples into the project and runs their tests with `node --test`, tollgate/testing's suites on the
 * package as installed: no tsx, no TypeScript, nothing of this checkout.
 */
export function examplesPass(project: string): void {
  const files = examples();
  for (const [file, code] of files) writeFileSync(join(project, file), code);
  const tests = [...files.keys()].filter((file) => file.endsWith('.test.js'));
  const ran = node(project, ['--test', '--test-reporter=tap', ...tests]);
  const missing = CONTRACTS.filter((contract) => !ran.output.includes(`- ${contract}`));
  check(
    ran.status === 0 && missing.length === 0,
    `${EXAMPLES_PAGE}'s store and adapter pass tollgate/testing's contracts under node --test (${tests.join(', ')})`,
    missing.length > 0 ? `no ${missing.join(', ')}suite ran: ${ran.output.trim()}` : tail(ran.output),
  );
}
