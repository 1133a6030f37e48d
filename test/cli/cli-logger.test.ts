// What the command's server logs: one line per entry on stderr, `tollgate: ...` or one JSON object, never a stack.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cliLogger } from '../../src/cli/cli-logger.js';

/** What `log` writes to stderr. */
function stderrOf(log: () => void): string {
  const write = process.stderr.write;
  let written = '';
  process.stderr.write = ((chunk: string) => {
    written += chunk;
    return true;
  }) as typeof process.stderr.write;
  try {
    log();
  } finally {
    process.stderr.write = write;
  }
  return written;
}

describe('cliLogger', () => {
  const fault = new Error('the page\nwent missing');

  it('writes an error as one JSON line with --json: the message, then the error message', () => {
    const line = stderrOf(() => cliLogger(true).error(fault, '[tollgate] the simulator failed to answer'));
    assert.equal(line.split('\n').length, 2);
    assert.deepEqual(JSON.parse(line), {
      level: 'error',
      message: 'the simulator failed to answer: the page went missing',
    });
    assert.deepEqual(JSON.parse(stderrOf(() => cliLogger(true).warn('[tollgate] slow store'))), {
      level: 'warn',
      message: 'slow store',
    });
  });

  it('writes one line of text without --json', () => {
    assert.equal(
      stderrOf(() => cliLogger(false).error(fault, '[tollgate] the simulator failed to answer')),
      'tollgate: the simulator failed to answer: the page went missing\n',
    );
    assert.equal(
      stderrOf(() => cliLogger(false).warn({ scope: 'data' }, 'store slow')),
      "tollgate: warning: store slow: { scope: 'data' }\n",
    );
  });
});
