// The page's uPlot is a verbatim copy of the `uplot` devDependency's files: upgrading it is a copy, and drift fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const require = createRequire(import.meta.url);
const VENDOR = new URL('../../simulator/vendor/', import.meta.url);

/** Vendored file to the `uplot` package file it copies. */
const COPIES: readonly (readonly [string, string])[] = [
  ['uPlot.iife.min.js', 'uplot/dist/uPlot.iife.min.js'],
  ['uPlot.min.css', 'uplot/dist/uPlot.min.css'],
  ['uPlot.LICENSE', 'uplot/LICENSE'],
];

describe('vendored uPlot', () => {
  for (const [vendored, original] of COPIES) {
    it(`simulator/vendor/${vendored} is byte-identical to ${original}`, () => {
      const copy = readFileSync(new URL(vendored, VENDOR));
      assert.ok(
        copy.equals(readFileSync(require.resolve(original))),
        `copy node_modules/${original} to simulator/vendor/${vendored}`,
      );
    });
  }
});
