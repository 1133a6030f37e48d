// Time bounds on Redis calls: a documented budget holds however Redis misbehaves (hung, slow, or gone).
import { TollgateError } from '../../errors.js';

/** What is left of one budget of `ms` from now, for work done in steps (never below 1 ms). */
export function budget(ms: number): () => number {
  const deadline = performance.now() + ms;
  return () => Math.max(1, Math.ceil(deadline - performance.now()));
}

/**
 * `promise`, or `ERR_TOLLGATE_TIMEOUT` after `ms` (counted in `metrics.timeouts`). One promise and one timer per
 * call: `Promise.race` plus `finally` cost three more promises.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, metrics: { timeouts: number }): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      metrics.timeouts++;
      reject(new TollgateError('ERR_TOLLGATE_TIMEOUT', `Redis did not answer within ${ms} ms`));
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
