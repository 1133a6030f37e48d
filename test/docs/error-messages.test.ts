// Error messages say what to do in themselves, then point to their code's section of docs/errors.md, the one page they cite.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rateLimit } from '../../src/adapters/express/express.js';
import { TollgateError, type TollgateErrorCode } from '../../src/core/errors.js';
import { createLimiter, MemoryStore } from '../../src/index.js';
import { fixedWindow } from '../../src/policies/fixed-window.js';
import { tokenBucket } from '../../src/policies/token-bucket.js';
import { simulate } from '../../src/simulator/engine/index.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const ERRORS_PAGE = readFileSync(fileURLToPath(new URL('../../docs/errors.md', import.meta.url)), 'utf8');

/** Every code, checked against the type: a code added to it and not here fails the type-check. */
const CODES: Record<TollgateErrorCode, true> = {
  ERR_TOLLGATE_CONFIG: true,
  ERR_TOLLGATE_ARGUMENT: true,
  ERR_TOLLGATE_STORE: true,
  ERR_TOLLGATE_TIMEOUT: true,
  ERR_TOLLGATE_WAIT_TIMEOUT: true,
};

/** Every source file of src/, relative to it. */
function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
}

/** The anchors GitHub gives the page's headings: lower case, punctuation dropped but `-` and `_`, spaces as `-`. */
function anchors(markdown: string): Set<string> {
  const headings = [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map(([, text]) => text as string);
  return new Set(
    headings.map((text) =>
      text
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

/** The code of a source file without its comments, which may cite the documents freely. */
function withoutComments(source: string): string {
  // A `//` after a colon is a URL's (redis://...), not a comment.
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

describe('error messages', () => {
  it('point to no document of the repository but docs/errors.md, and to that only from src/core/errors.ts', () => {
    const files = sourceFiles();
    assert.ok(files.length > 50, `found ${files.length} source files`);
    const cited = files.flatMap((file) =>
      [
        ...withoutComments(readFileSync(join(SRC, file), 'utf8')).matchAll(
          /\b(?:docs\/[\w-]+|README)\.md\b/g,
        ),
      ].map(([match]) => `src/${file}: ${match}`),
    );
    assert.deepEqual(
      cited.filter((citation) => citation !== 'src/core/errors.ts: docs/errors.md'),
      [],
    );
    assert.ok(cited.includes('src/core/errors.ts: docs/errors.md'), 'the pointer is built in errors.ts');
  });

  it("express-rate-limit's options name the subpath that takes them, and Tollgate's way to write a window", () => {
    assert.throws(
      () => rateLimit({ windowMs: 60_000, limit: 5 } as never),
      (error: unknown) => {
        assert.ok(error instanceof TollgateError && error.code === 'ERR_TOLLGATE_CONFIG');
        assert.match(
          error.message,
          /^`windowMs` is not an option of rateLimit \(an express-rate-limit option/,
        );
        assert.match(error.message, /import rateLimit from 'tollgate\/express-rate-limit'/);
        assert.match(error.message, /`policy: fixedWindow\(\{ limit, windowMs \}\)`/);
        return true;
      },
    );
  });
});

describe('docs/errors.md', () => {
  const sections = anchors(ERRORS_PAGE);

  it('has a section per error code, its heading the code itself', () => {
    for (const code of Object.keys(CODES)) {
      assert.ok(sections.has(code.toLowerCase()), `no "## ${code}" section`);
      assert.ok(ERRORS_PAGE.includes(`\n## ${code}\n`), `the heading of ${code} is the code alone`);
    }
  });

  it('has a section per warning code the source emits', () => {
    const emitted = new Set(
      sourceFiles().flatMap((file) =>
        [...readFileSync(join(SRC, file), 'utf8').matchAll(/\bcode: '(TOLLGATE_[A-Z_]+)'/g)].map(
          ([, code]) => code as string,
        ),
      ),
    );
    assert.ok(emitted.has('TOLLGATE_SHARED_SCOPE'), [...emitted].join(', '));
    for (const code of emitted) assert.ok(sections.has(code.toLowerCase()), `no "## ${code}" section`);
  });

  it('is where every TollgateError is built: in src/core/errors.ts, by its constructors', () => {
    const built = sourceFiles().filter((file) =>
      /\bnew TollgateError\b/.test(withoutComments(readFileSync(join(SRC, file), 'utf8'))),
    );
    assert.deepEqual(built, [join('core', 'errors.ts')]);
  });

  it("ends a thrown error's message with one pointer, to its code's section", async () => {
    const limiter = createLimiter({
      policy: fixedWindow({ limit: 1, windowMs: '1m' }),
      store: new MemoryStore(),
    });
    await limiter.consume('spent');
    const thrown = [
      await caught(() => tokenBucket({ capacity: -1, refillPerSecond: 1 })),
      await caught(() => limiter.consume('')),
      await caught(() => limiter.wait('spent', { maxWaitMs: 10 })),
      // Prefixed with the policy's number, the factory's message still ends with one pointer.
      await caught(() =>
        simulate({ policies: [{ kind: 'fixed-window', limit: -1, windowMs: 1000 }], arrivals: [] }),
      ),
    ];
    assert.deepEqual(
      thrown.map((error) => error.code),
      ['ERR_TOLLGATE_CONFIG', 'ERR_TOLLGATE_ARGUMENT', 'ERR_TOLLGATE_WAIT_TIMEOUT', 'ERR_TOLLGATE_CONFIG'],
    );
    for (const error of thrown) {
      const anchor = error.code.toLowerCase();
      assert.ok(error.message.endsWith(` (see tollgate/docs/errors.md#${anchor})`), error.message);
      assert.equal(error.message.split('docs/errors.md').length, 2, error.message);
      assert.ok(sections.has(anchor), anchor);
    }
  });
});

/** The TollgateError `fn` throws or rejects with. */
async function caught(fn: () => unknown): Promise<TollgateError> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof TollgateError, String(error));
    return error;
  }
  return assert.fail('expected a TollgateError');
}
