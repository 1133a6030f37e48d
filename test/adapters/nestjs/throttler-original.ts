// @nestjs/throttler as the app's own Nest sees it: its CommonJS build handed the very @nestjs/common and
// @nestjs/core instances the test imports (the test runner's loader would otherwise compile copies of its own).
import { createRequire, Module } from 'node:module';
import * as common from '@nestjs/common';
import * as core from '@nestjs/core';
import type * as Throttler from '@nestjs/throttler';

const require = createRequire(import.meta.url);
for (const [name, exports] of [
  ['@nestjs/common', common],
  ['@nestjs/core', core],
] as const) {
  const file = require.resolve(name);
  const shared = new Module(file);
  shared.exports = exports;
  shared.loaded = true;
  require.cache[file] = shared;
}

export const original = require('@nestjs/throttler') as typeof Throttler;
