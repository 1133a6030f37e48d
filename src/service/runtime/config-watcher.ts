// Sees the configuration files change: fs.watch on their folders for speed, a stat poll for what it misses, content hashes to decide.
import { createHash } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readConfigFiles } from '../config/read-files.js';

export interface ConfigWatcherOptions {
  /** The configuration's files and folders, as given to the service. */
  readonly paths: readonly string[];
  /** Called once the content changed and settled, never twice at a time; it must not reject. */
  readonly onChange: () => Promise<void>;
  /** How often the files are stat'ed when no event came. Default 300 ms. */
  readonly pollMs?: number;
  /** How long changes must pause before the content is read: an editor's save is several. Default 100 ms. */
  readonly debounceMs?: number;
}

export interface ConfigWatcher {
  close(): void;
}

/**
 * Watches `paths` and calls `onChange` when what they hold differs from what it held at the start (or at the last
 * change). fs.watch is on each folder rather than each file: an editor that saves by writing a new file and renaming
 * it over the old one, or Kubernetes swapping a ConfigMap's symlinked folder, replaces the file a watch on it would
 * follow. fs.watch misses events on some file systems (network mounts, some container volumes), so a poll of the
 * files' stats backs it up; either only leads to a hash of the content, so a touch or an event for another file
 * reloads nothing.
 */
export async function watchConfig(options: ConfigWatcherOptions): Promise<ConfigWatcher> {
  const { paths, onChange, pollMs = 300, debounceMs = 100 } = options;
  let stats = await statsOf(paths);
  let hash = await hashOf(paths);
  let closed = false;
  /** Reads the content and calls `onChange` if it differs. */
  const check = oneAtATime(async () => {
    if (closed) return;
    const now = await hashOf(paths);
    const changed = now !== hash;
    hash = now;
    if (changed && !closed) await onChange();
  });

  // Both routes wait for the writes to pause before reading: a file written in place is empty for a moment.
  let debounce: NodeJS.Timeout | undefined;
  const changed = () => {
    clearTimeout(debounce);
    debounce = setTimeout(check, debounceMs);
    debounce.unref();
  };
  let polling = false;
  const poll = setInterval(() => {
    if (polling) return;
    polling = true;
    void statsOf(paths)
      .then((now) => {
        if (now === stats) return;
        stats = now;
        changed();
      })
      .finally(() => {
        polling = false;
      });
  }, pollMs);
  poll.unref();
  const watchers = (await folders(paths)).map((folder) => watchFolder(folder, changed));
  return {
    close() {
      closed = true;
      clearInterval(poll);
      clearTimeout(debounce);
      for (const watcher of watchers) watcher?.close();
    },
  };
}

/** `task` run one at a time: a call while it runs asks for one more run once it is done, however many calls. */
function oneAtATime(task: () => Promise<void>): () => void {
  let running = false;
  let rerun = false;
  const run = (): void => {
    if (running) {
      rerun = true;
      return;
    }
    running = true;
    void task().finally(() => {
      running = false;
      if (rerun) {
        rerun = false;
        run();
      }
    });
  };
  return run;
}

/** Every folder to watch: a folder given, or the folder of a file given (or of one not there yet). */
async function folders(paths: readonly string[]): Promise<string[]> {
  const all = await Promise.all(paths.map(async (path) => ((await isFolder(path)) ? path : dirname(path))));
  return [...new Set(all)];
}

async function isFolder(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/** An fs.watch that reports every event, or undefined where the platform or the folder refuses one: the poll remains. */
function watchFolder(folder: string, changed: () => void): FSWatcher | undefined {
  try {
    const watcher = watch(folder, { persistent: false }, changed);
    // A folder deleted or a watch limit reached: the poll still sees what changes.
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return undefined;
  }
}

/**
 * What to stat for `path`: the file itself, or a folder's entries not starting with a dot (Kubernetes keeps its
 * timestamped folders and `..data` link there). More than the loader reads, which at worst costs a hash.
 */
async function filesOf(path: string): Promise<string[]> {
  if (!(await isFolder(path))) return [path];
  const names = await readdir(path).catch(() => []);
  return names
    .filter((name) => !name.startsWith('.'))
    .sort()
    .map((name) => join(path, name));
}

async function statsOf(paths: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const path of paths) {
    for (const file of await filesOf(path)) {
      // stat follows symlinks: a link swapped to a new target shows the new file's inode.
      const info = await stat(file).catch((error: NodeJS.ErrnoException) => error.code ?? 'unreadable');
      parts.push(
        typeof info === 'string' ? `${file}:${info}` : `${file}:${info.ino}:${info.size}:${info.mtimeMs}`,
      );
    }
  }
  return parts.join('\n');
}

/** The hash of what the loader would read: the same files, so no other file's change reloads anything. */
async function hashOf(paths: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  try {
    for (const { path, text } of await readConfigFiles(paths)) hash.update(`${path}\0${text}\0`);
  } catch (error) {
    // A file gone or unreadable is a state too: reloading reports it, and its return is a change again.
    hash.update(`!${error instanceof Error ? error.message : String(error)}`);
  }
  return hash.digest('hex');
}
