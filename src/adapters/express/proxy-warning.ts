// Express's trust-proxy trap, told once per middleware: behind a proxy that is not trusted, every client is one.
import type { Request } from 'express';
import type { Logger } from '../../core/logger.js';

/** Warns, on the first request that shows it, that `X-Forwarded-For` arrives while 'trust proxy' is off. */
export function proxyWarning(logger: Logger): (req: Request) => void {
  let warned = false;
  return (req) => {
    if (warned || req.headers['x-forwarded-for'] === undefined || req.app.get('trust proxy')) return;
    warned = true;
    logger.warn(
      "[tollgate] X-Forwarded-For is present but Express's 'trust proxy' is off, so every client behind the " +
        "proxy shares one bucket. Set app.set('trust proxy', <number of proxies you control>).",
    );
  };
}
