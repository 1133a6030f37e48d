// The configuration watcher: a change by any route is seen once, a touch or another file's change is not a change.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type ConfigWatcher, watchConfig } from '../../../src/service/runtime/config-watcher.js';
import { eventually } from './rls-client.js';

const dirs: string[] = [];
const watchers: ConfigWatcher[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-watch-'));
  dirs.push(dir);
  return dir;
}

async function watching(paths: string[]) {
  let changes = 0;
  const watcher = await watchConfig({
    paths,
    onChange: async () => {
      changes++;
    },
    pollMs: 50,
  });
  watchers.push(watcher);
  return { changes: () => changes };
}

describe('watchConfig', { timeout: 30_000 }, () => {
  after(() => {
    for (const watcher of watchers) watcher.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('reports a change of content once, and nothing for a touch or a file the loader does not read', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'limits.yaml'), 'domain: a\n');
    const seen = await watching([dir]);
    writeFileSync(join(dir, 'notes.txt'), 'not configuration');
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, 'limits.yaml'), later, later);
    writeFileSync(join(dir, 'limits.yaml'), 'domain: b\n');
    await eventually('the change is reported', () => seen.changes() === 1);
    // A marker change after the others: once it is seen, every earlier event has been handled.
    writeFileSync(join(dir, 'limits.yaml'), 'domain: c\n');
    await eventually('the marker is reported', () => seen.changes() === 2);
  });

  it('sees by its poll what no fs.watch could: a file in a folder made after the watch began', async () => {
    const dir = join(tempDir(), 'later');
    const seen = await watching([join(dir, 'limits.yaml')]);
    mkdirSync(dir);
    writeFileSync(join(dir, 'limits.yaml'), 'domain: a\n');
    await eventually('the new file is reported', () => seen.changes() >= 1);
  });

  it('stops on close', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'limits.yaml'), 'domain: a\n');
    let changes = 0;
    const watcher = await watchConfig({
      paths: [dir],
      onChange: async () => {
        changes++;
      },
      pollMs: 20,
    });
    watcher.close();
    writeFileSync(join(dir, 'limits.yaml'), 'domain: b\n');
    // A second watcher seeing the write proves the first had its chance.
    const witness = await watching([dir]);
    writeFileSync(join(dir, 'limits.yaml'), 'domain: c\n');
    await eventually('the witness sees the write', () => witness.changes() >= 1);
    assert.equal(changes, 0);
  });
});
