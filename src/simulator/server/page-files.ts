// The simulator page's files, served from a fixed table: no part of a request's URL ever reaches the file system.
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { packageRoot } from '../../core/module-location.js';

export interface PageFile {
  /** Relative to the page directory. */
  readonly file: string;
  readonly type: string;
}

/** The content type of each kind of page file, by extension; a file of another kind fails the type-check below. */
const TYPES = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
} as const;

/**
 * Every file the page loads, relative to the page directory; a page module missing here fails to load in the
 * browser. The tests fetch each entry and check that every page file on disk is listed.
 */
const FILES = [
  'index.html',
  'style.css',
  // The page's ES modules: app.js is the entry index.html loads, the rest are what it imports.
  'app.js',
  'adaptive-view.js',
  'charts.js',
  'choices.js',
  'describe.js',
  'dom.js',
  'forms.js',
  'live-view.js',
  'simulate-view.js',
  // uPlot, vendored: a copy of the `uplot` package's dist files, so an install needs no charting package.
  'vendor/uPlot.iife.min.js',
  'vendor/uPlot.min.css',
] as const satisfies readonly `${string}.${keyof typeof TYPES}`[];

/** The page files by URL path: each at its own name, the page itself at `/`. */
export const PAGE_FILES: ReadonlyMap<string, PageFile> = new Map(
  FILES.map((file) => [
    file === 'index.html' ? '/' : `/${file}`,
    { file, type: TYPES[file.slice(file.lastIndexOf('.') + 1) as keyof typeof TYPES] },
  ]),
);

/** Answers 200 with the file; rejects if it cannot be read. */
export async function sendPageFile(res: ServerResponse, page: PageFile): Promise<void> {
  // `simulator/` at the package root, found when a page file is first asked for rather than as the module loads.
  const body = await readFile(join(packageRoot(), 'simulator', page.file));
  res.statusCode = 200;
  res.setHeader('Content-Type', page.type);
  res.setHeader('Content-Length', body.length);
  // Read on every request and revalidated on every load, so an edited page shows on reload.
  res.setHeader('Cache-Control', 'no-cache');
  res.end(body);
}
