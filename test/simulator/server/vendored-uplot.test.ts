// The page's uPlot is a verbatim copy of the `uplot` devDependency's files: upgrading it is a copy, and drift fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const VENDOR = new URL('../../../simulator/vendor/', import.meta.url);

/** Vendored file to the `uplot` package file it copies (resolved where they are named, so tools see the use). */
const COPIES: readonly (readonly [string, string])[] = [
  ['uPlot.iife.min.js', import.meta.resolve('uplot/dist/uPlot.iife.min.js')],
  ['uPlot.min.css', import.meta.resolve('uplot/dist/uPlot.min.css')],
  ['uPlot.LICENSE', import.meta.resolve('uplot/LICENSE')],
];

describe('vendored uPlot', () => {
  for (const [vendored, original] of COPIES) {
    it(`simulator/vendor/${vendored} is byte-identical to the uplot package's`, () => {
      const copy = readFileSync(new URL(vendored, VENDOR));
      assert.ok(
        copy.equals(readFileSync(new URL(original))),
        `copy ${fileURLToPath(original)} to simulator/vendor/${vendored}`,
      );
    });
  }
});
