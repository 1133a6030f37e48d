// Error messages say what to do in themselves: the package ships no docs/ folder, and its npm page cannot follow a relative link.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rateLimit } from '../../src/adapters/express/express.js';
import { TollgateError } from '../../src/core/errors.js';
import { fixedWindow } from '../../src/policies/fixed-window.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** The code of a source file without its comments, which may cite the documents freely. */
function withoutComments(source: string): string {
  // A `//` after a colon is a URL's (redis://...), not a comment.
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

describe('error messages', () => {
  it('point to no document of the repository', () => {
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    );
    assert.ok(files.length > 50, `found ${files.length} source files`);
    const cited = files.flatMap((file) =>
      [
        ...withoutComments(readFileSync(join(SRC, file), 'utf8')).matchAll(
          /\b(?:docs\/[\w-]+|README)\.md\b/g,
        ),
      ].map(([match]) => `src/${file}: ${match}`),
    );
    assert.deepEqual(cited, []);
  });

  it("a mix of express-rate-limit's options and Tollgate's says how to write either", () => {
    assert.throws(
      () =>
        rateLimit({ windowMs: 60_000, limit: 5, policy: fixedWindow({ limit: 5, windowMs: '1m' }) } as never),
      (error: unknown) => {
        assert.ok(error instanceof TollgateError && error.code === 'ERR_TOLLGATE_CONFIG');
        assert.match(error.message, /^`policy` is Tollgate's own, and `windowMs` is express-rate-limit's/);
        assert.match(error.message, /leave out `policy`/);
        assert.match(
          error.message,
          /`windowMs` and `limit` become `policy: fixedWindow\(\{ limit, windowMs \}\)`/,
        );
        return true;
      },
    );
  });
});
