// The README's first commands against the demo app: the statuses its loop prints, and its `curl -i` of a 429 field for field.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { createDemoApp } from '../../demo/demo-app.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { type ContractApp, listen } from '../../src/testing/adapter-contract.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** The demo's clock stands still, so every request of the sample is made at one instant. */
const T0 = Date.UTC(2026, 11, 1, 23, 36, 36, 643);
/** Fields whose value is the time the sample was taken: compared by form, not value. */
const TIMED = new Set(['Date', 'X-RateLimit-Reset']);

/** The shell block of the quick start that has the `curl -i`, its `# ` comment lines without the marker. */
function quickStart(): { statuses: string; status: string; fields: [string, string][]; body: string } {
  const block = /```sh\n((?:(?!```)[\s\S])*curl -i [\s\S]*?)```/.exec(README)?.[1];
  assert.ok(block !== undefined, 'README.md shows a `curl -i` in a sh block');
  const lines = block.split('\n');
  const loop = lines.findIndex((line) => line.startsWith('for i in'));
  const shown = lines
    .slice(lines.findIndex((line) => line.startsWith('curl -i')) + 1)
    .filter((line) => line.startsWith('#'))
    .map((line) => line.replace(/^# ?/, ''));
  const blank = shown.indexOf('');
  const [status = '', ...fields] = shown.slice(0, blank);
  return {
    statuses: (lines[loop + 1] ?? '').replace(/^# /, ''),
    status,
    fields: fields.map((field) => field.split(': ', 2) as [string, string]),
    body: shown.slice(blank + 1).join('\n'),
  };
}

interface Answer {
  readonly status: string;
  readonly fields: [string, string][];
  readonly body: string;
}

/** A GET as curl makes it (HTTP/1.1, keep-alive), with the fields in the order and spelling they were sent. */
function get(url: string, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const fields: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          fields.push([res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string]);
        resolve({ status: `HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}`, fields, body });
      });
    })
      .on('error', reject)
      .end();
  });
}

describe("README: the quick start's output is what the demo sends", () => {
  const store = new MemoryStore({ clock: () => T0, autoCleanup: false });
  const agent = new Agent({ keepAlive: true });
  let app: ContractApp;
  before(async () => {
    app = await listen(createServer(createDemoApp({ store, logger: pino({ enabled: false }) })));
  });
  after(async () => {
    agent.destroy();
    await app.close();
    store.close();
  });

  it('5 allowed, then 429, and the 429 shown whole: status, every field in order, body', async () => {
    const shown = quickStart();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push(Number((await get(`${app.url}/api/expensive`, agent)).status.split(' ')[1]));
    assert.equal(statuses.join(' '), shown.statuses);

    const answer = await get(`${app.url}/api/expensive`, agent);
    assert.equal(answer.status, shown.status);
    assert.deepEqual(
      answer.fields.map(([name]) => name),
      shown.fields.map(([name]) => name),
    );
    const at = new Map(answer.fields);
    for (const [name, value] of shown.fields) {
      if (!TIMED.has(name)) assert.equal(at.get(name), value, name);
    }
    assert.equal(at.get('X-RateLimit-Reset'), new Date(T0 + 60_000).toISOString());
    assert.equal(answer.body, shown.body);

    // The sample's own times agree with each other: reset 60 s after the response's date, to the second.
    const sample = new Map(shown.fields);
    const resetIn =
      Date.parse(String(sample.get('X-RateLimit-Reset'))) - Date.parse(String(sample.get('Date')));
    assert.ok(Math.abs(resetIn - 60_000) < 1_000, `X-RateLimit-Reset is ${resetIn} ms after Date`);
  });
});
