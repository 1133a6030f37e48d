// The library's own files found from a stack frame, with no import.meta: as run here, from src/ under tsx.
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { libraryFolder, packageRoot, requireFromHere, runningFile } from '../../src/core/module-location.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// First, while nothing has read the location yet: it is read once, whatever the app did to Error's stack settings.
it("reads its own file whatever the app set Error's stack settings to, and puts them back", () => {
  const { prepareStackTrace, stackTraceLimit } = Error;
  const appFormat = () => 'formatted by the app';
  try {
    Error.prepareStackTrace = appFormat;
    Error.stackTraceLimit = 0;
    assert.equal(runningFile(), join(ROOT, 'src', 'core', 'module-location.ts'));
    assert.equal(Error.prepareStackTrace, appFormat);
    assert.equal(Error.stackTraceLimit, 0);
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
});

it('knows the library folder and the package root above it', () => {
  assert.equal(libraryFolder(), join(ROOT, 'src'));
  assert.equal(packageRoot(), resolve(ROOT));
});

it('requires packages as resolved from the library', () => {
  const required = requireFromHere()('ipaddr.js') as { isValid?: unknown };
  assert.equal(typeof required.isValid, 'function');
});
