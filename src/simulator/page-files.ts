// The simulator page's files, served from a fixed table: no part of a request's URL ever reaches the file system.
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';

/** `simulator/` at the package root, two levels above this module both in src/simulator/ and in dist/simulator/. */
const PAGE_DIR = new URL('../../simulator/', import.meta.url);

export interface PageFile {
  /** Relative to the page directory. */
  readonly file: string;
  readonly type: string;
}

/**
 * Every file the page loads, by URL path; a page module missing here fails to load in the browser. The tests fetch
 * each entry and check that every page file on disk is listed.
 */
export const PAGE_FILES: ReadonlyMap<string, PageFile> = new Map([
  ['/', { file: 'index.html', type: 'text/html; charset=utf-8' }],
  // The page's ES modules: app.js is the entry index.html loads, the rest are what it imports.
  ['/app.js', { file: 'app.js', type: 'text/javascript; charset=utf-8' }],
  ['/charts.js', { file: 'charts.js', type: 'text/javascript; charset=utf-8' }],
  ['/choices.js', { file: 'choices.js', type: 'text/javascript; charset=utf-8' }],
  ['/describe.js', { file: 'describe.js', type: 'text/javascript; charset=utf-8' }],
  ['/dom.js', { file: 'dom.js', type: 'text/javascript; charset=utf-8' }],
  ['/forms.js', { file: 'forms.js', type: 'text/javascript; charset=utf-8' }],
  ['/live-view.js', { file: 'live-view.js', type: 'text/javascript; charset=utf-8' }],
  ['/simulate-view.js', { file: 'simulate-view.js', type: 'text/javascript; charset=utf-8' }],
  ['/style.css', { file: 'style.css', type: 'text/css; charset=utf-8' }],
  // uPlot, vendored: a copy of the `uplot` package's dist files, so an install needs no charting package.
  ['/vendor/uPlot.iife.min.js', { file: 'vendor/uPlot.iife.min.js', type: 'text/javascript; charset=utf-8' }],
  ['/vendor/uPlot.min.css', { file: 'vendor/uPlot.min.css', type: 'text/css; charset=utf-8' }],
]);

/** The file served at the URL path `path`, if any. */
export function pageFile(path: string): PageFile | undefined {
  return PAGE_FILES.get(path);
}

/** Answers 200 with the file; rejects if it cannot be read. */
export async function sendPageFile(res: ServerResponse, page: PageFile): Promise<void> {
  const body = await readFile(new URL(page.file, PAGE_DIR));
  res.statusCode = 200;
  res.setHeader('Content-Type', page.type);
  res.setHeader('Content-Length', body.length);
  // Read on every request and revalidated on every load, so an edited page shows on reload.
  res.setHeader('Cache-Control', 'no-cache');
  res.end(body);
}
