// Express's trust-proxy traps, each told once per middleware: no proxy trusted behind one, or more trusted than exist.
import type { Request } from 'express';
import type { Logger } from '../../core/logger.js';

export const PERMISSIVE_TRUST_PROXY =
  "Express's 'trust proxy' setting is true, or trusts more proxies than this request came through, so the client " +
  'address is read from an X-Forwarded-For the client can forge: anyone can pick any identity, and a fresh limit with ' +
  "each. Set app.set('trust proxy', <number of proxies you control>).";

/**
 * Whether Express would take the client address from an entry the client itself wrote: `trust proxy` true, or a hop
 * count above the proxies this request passed, which is its number of X-Forwarded-For entries (each proxy adds one,
 * the one that connected included). Express reads the address N hops back from the socket, the left-most entry when
 * there are no more, so with N above the entries a client that adds one more entry is believed.
 */
export function permissiveTrustProxy(req: Request): boolean {
  const trust: unknown = req.app.get('trust proxy');
  if (trust === true) return true;
  if (typeof trust !== 'number') return false;
  const forwarded = req.headers['x-forwarded-for'];
  return trust > (forwarded === undefined ? 0 : entries(String(forwarded)));
}

/** The entries of an X-Forwarded-For value, counted without splitting it: this runs on every request. */
function entries(forwarded: string): number {
  let count = 1;
  for (let at = forwarded.indexOf(','); at !== -1; at = forwarded.indexOf(',', at + 1)) count++;
  return count;
}

/**
 * Warns, on the first request that shows it, that `X-Forwarded-For` arrives while 'trust proxy' is off, and, apart,
 * that 'trust proxy' lets a client choose its own address.
 */
export function proxyWarning(logger: Logger): (req: Request) => void {
  let untrusted = false;
  let permissive = false;
  return (req) => {
    if (!permissive && permissiveTrustProxy(req)) {
      permissive = true;
      logger.warn(`[tollgate] ${PERMISSIVE_TRUST_PROXY}`);
    }
    if (untrusted || req.headers['x-forwarded-for'] === undefined || req.app.get('trust proxy')) return;
    untrusted = true;
    logger.warn(
      "[tollgate] X-Forwarded-For is present but Express's 'trust proxy' is off, so every client behind the " +
        "proxy shares one bucket. Set app.set('trust proxy', <number of proxies you control>).",
    );
  };
}
