// When a counted hit goes back to the store, by express-rate-limit's rule: skipFailedRequests and skipSuccessfulRequests.
import type { Request, Response } from 'express';
import type { Config } from './options.js';

/** The ends of a response a give-back waits for, listened to from the request's start (a close may come early). */
export interface Endings {
  readonly finish: Promise<unknown> | undefined;
  readonly close: Promise<unknown> | undefined;
  readonly error: Promise<unknown> | undefined;
}

export function listenForEnds(config: Config, res: Response): Endings {
  const { skipFailedRequests: failed, skipSuccessfulRequests: succeeded } = config;
  const on = (event: string) => new Promise((resolve) => res.once(event, resolve));
  return {
    finish: failed || succeeded ? on('finish') : undefined,
    close: failed ? on('close') : undefined,
    error: failed ? on('error') : undefined,
  };
}

/**
 * Gives the hit back once: per `requestWasSuccessful` when the response is sent, as a failure when the connection
 * closes before the response was ended or the response errs. Never to a window that has ended since: `resetTime`
 * is when the store said the hit's window ends.
 */
export function giveBackWhenDone(
  config: Config,
  req: Request,
  res: Response,
  key: string,
  resetTime: Date | undefined,
  ends: Endings,
): void {
  const { store, logger } = config;
  let given = false;
  const giveBack = async () => {
    if (given) return;
    given = true;
    if (resetTime && Date.now() >= resetTime.getTime()) return;
    try {
      await store.decrement(key);
    } catch (error) {
      logger.error(error, 'express-rate-limit: error from store during decrement.');
    }
  };
  const report = (what: string) => (error: unknown) => logger.error(error, `express-rate-limit: ${what}`);
  const whenSent = (giveBackIf: boolean) =>
    ends.finish
      ?.then(async () => {
        if (Boolean(await config.requestWasSuccessful(req, res)) === giveBackIf) await giveBack();
      })
      .catch(report('error in requestWasSuccessful callback.'));
  if (config.skipFailedRequests) {
    void whenSent(false);
    void ends.close
      ?.then(async () => {
        if (!res.writableEnded) await giveBack();
      })
      .catch(report('error handling close event during decrement.'));
    void ends.error?.then(giveBack).catch(report('error handling error event during decrement.'));
  }
  if (config.skipSuccessfulRequests) void whenSent(true);
}
