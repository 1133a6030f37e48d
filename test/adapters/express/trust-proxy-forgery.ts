// Which 'trust proxy' settings let a client-added X-Forwarded-For entry through, asked of real Express, beside
// whether a limiter warned: the permissive-trust-proxy warning must fire exactly where a forgery is believed.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import type { RequestHandler } from 'express';

/** The address a client writes in front of the entries its proxies add. */
const FORGED = '203.0.113.66';
/** Entries honest proxies add, in the order they add them. */
const PROXIES = ['198.51.100.1', '198.51.100.2', '198.51.100.3'];

/** A fresh limiter, and whether it has warned that 'trust proxy' lets a client pick its address. */
export interface Watched {
  readonly handler: RequestHandler;
  readonly warned: () => boolean;
}

export interface Row {
  readonly trust: unknown;
  /** X-Forwarded-For entries on the honest request: the proxies it passed. */
  readonly entries: number;
  /** Whether Express took `req.ip` from the entry a client added in front of those. */
  readonly believed: boolean;
  /** Whether a limiter that saw the honest request warned. */
  readonly warned: boolean;
}

/**
 * For each setting and each number of proxies (0 to 3, each adding an entry): the honest request through a limiter
 * of its own, and the same request with one entry more in front, written by the client, whose `req.ip` tells
 * whether Express believes it.
 */
export async function forgeryTable(
  createApp: typeof express,
  settings: readonly unknown[],
  watch: () => Watched,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const trust of settings) {
    const app = createApp();
    app.set('trust proxy', trust);
    const limiters = PROXIES.map(() => watch()).concat(watch());
    for (const [entries, limiter] of limiters.entries())
      app.get(`/limited/${entries}`, limiter.handler, (_req, res) => {
        res.send('ok');
      });
    app.get('/ip', (req, res) => {
      res.send(req.ip);
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const get = async (path: string, forwarded: readonly string[]) => {
      const headers: Record<string, string> =
        forwarded.length > 0 ? { 'x-forwarded-for': forwarded.join(', ') } : {};
      return (await fetch(`${base}${path}`, { headers })).text();
    };
    try {
      for (const [entries, limiter] of limiters.entries()) {
        const honest = PROXIES.slice(0, entries);
        await get(`/limited/${entries}`, honest);
        const believed = (await get('/ip', [FORGED, ...honest])) === FORGED;
        rows.push({ trust, entries, believed, warned: limiter.warned() });
      }
    } finally {
      server.close();
    }
  }
  return rows;
}

/** The settings the tables walk: on and off, and hop counts from 0 to 4. */
export const SETTINGS = [true, false, 0, 1, 2, 3, 4] as const;
