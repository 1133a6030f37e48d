// An app written for express-rate-limit, its import aside, run on express-rate-limit in this checkout and on
// tollgate/express-rate-limit as installed, imported as an ES module and required as CommonJS: the answers must match.
import { check, NO_REQUIRE_ESM, node, ROOT, specifierOf } from './install-project.js';

const SUBPATH = './express-rate-limit';

/**
 * Four option sets of express-rate-limit's documentation's kind, each asked until it rejects, on a clock mocked to
 * one instant. Prints every answer's status, rate-limit fields, body and the route's or handler's view of the
 * request's figures, as one JSON line. `esm`: its modules imported; else required, as a CommonJS app does
 * (`const rateLimit = require('express-rate-limit')`, the module itself the factory).
 */
function expressRateLimitApp(specifier: string, esm: boolean): string {
  const modules = esm
    ? `import { once } from 'node:events';
import { request } from 'node:http';
import { mock } from 'node:test';
import express from 'express';
import { rateLimit } from '${specifier}';`
    : `const { once } = require('node:events');
const { request } = require('node:http');
const { mock } = require('node:test');
const express = require('express');
const rateLimit = require('${specifier}');`;
  return `${modules}

mock.timers.enable({ apis: ['Date'], now: Date.UTC(2026, 0, 1, 12, 0, 0, 250) });
const configurations = [
  { windowMs: 15 * 60 * 1000, limit: 2, standardHeaders: 'draft-8', legacyHeaders: false },
  { windowMs: 60 * 1000, limit: 2 },
  { windowMs: 60 * 1000, limit: 1, standardHeaders: 'draft-7', message: { error: 'Slow down.' } },
  {
    max: async (req) => (req.get('x-plan') === 'pro' ? 3 : 2),
    standardHeaders: true,
    requestPropertyName: 'quota',
    handler: (req, res, next, options) =>
      res.status(options.statusCode).json({ quota: req.quota, windowMs: options.windowMs }),
  },
];
const get = (port) =>
  new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        const fields = Object.entries(res.headers).filter(([name]) => /ratelimit|retry-after/.test(name));
        resolve({ status: res.statusCode, fields: Object.fromEntries(fields.sort()), body });
      });
    }).on('error', reject).end();
  });
(async () => {
  const answers = [];
  for (const options of configurations) {
    const app = express();
    app.use(rateLimit(options));
    app.get('/', (req, res) => res.json(req[options.requestPropertyName ?? 'rateLimit']));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    for (let status = 0; status !== 429; ) {
      const answer = await get(server.address().port);
      answers.push(answer);
      status = answer.status;
    }
    server.close();
  }
  process.stdout.write(JSON.stringify(answers));
})();
`;
}

/** The app on express-rate-limit (this checkout's), then on tollgate in `esmProject` and in `cjsProject`: Express installed in both. */
export function expressRateLimitAnswersAlike(esmProject: string, cjsProject: string): void {
  const specifier = specifierOf(SUBPATH);
  const theirs = node(ROOT, ['--input-type=module', '-e', expressRateLimitApp('express-rate-limit', true)]);
  const imported = node(esmProject, ['--input-type=module', '-e', expressRateLimitApp(specifier, true)]);
  const required = node(cjsProject, [...NO_REQUIRE_ESM, '-e', expressRateLimitApp(specifier, false)]);
  for (const [ours, how] of [
    [imported, `import { rateLimit } from '${specifier}'`],
    [required, `const rateLimit = require('${specifier}')`],
  ] as const) {
    check(
      theirs.status === 0 && ours.status === 0 && ours.output === theirs.output,
      `an express-rate-limit app runs on \`${how}\` and answers as express-rate-limit does`,
      `express-rate-limit: ${theirs.output.trim()}\n${specifier}: ${ours.output.trim()}`,
    );
  }
}
