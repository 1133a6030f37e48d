// The one contract every adapter passes over real HTTP: same answers, same headers, same failure modes.
import { describe } from 'node:test';
import { abortContract } from './adapter-contract-aborts.js';
import { coreContract } from './adapter-contract-core.js';
import type { AdapterCapabilities, ContractApp, ContractOptions, MakeApp } from './adapter-contract-http.js';
import { idiomsContract } from './adapter-contract-idioms.js';
import { modesContract } from './adapter-contract-modes.js';
import { concurrencyContract, refundContract } from './adapter-contract-shaping.js';

export { silentLogger, unitsLeft } from './adapter-contract-fixtures.js';
export {
  type AdapterCapabilities,
  CLIENT,
  type ContractApp,
  listen,
  type MakeApp,
  type RoutePlan,
  request,
  STREAMED,
  shapedByApp,
  streamedChunks,
} from './adapter-contract-http.js';

/**
 * Registers the adapter contract's tests with node:test, under `adapter contract: <name>`: for each test,
 * `makeApp(options)` builds an app with the adapter in front of a route and returns it listening (`listen(server)`
 * for a node:http server). `capabilities.thrown` says whether the adapter can throw its rejections.
 *
 * @example
 * // The adapter's own options passed on, the app's hooks acted out the framework's way: `hooksOf` turns the
 * // contract's `handler` and `requestWasSuccessful` into the adapter's, `serve` answers the route's plan
 * // (docs/extending.md has a complete binding).
 * runAdapterContract(
 *   'node:http',
 *   async ({ handler, beforeLimit, route, requestWasSuccessful, ...options }) => {
 *     const limited = withRateLimit({ ...options, ...hooksOf(handler, requestWasSuccessful) }, (req, res) =>
 *       serve(route?.(req.rateLimit) ?? {}, res),
 *     );
 *     return listen(
 *       createServer(async (req, res) => {
 *         await beforeLimit?.(req);
 *         await limited(req, res);
 *       }),
 *     );
 *   },
 *   { thrown: false },
 * );
 */
export function runAdapterContract(name: string, makeApp: MakeApp, capabilities: AdapterCapabilities): void {
  const withApp = async (options: ContractOptions, run: (app: ContractApp) => Promise<void>) => {
    const app = await makeApp(options);
    try {
      await run(app);
    } finally {
      await app.close();
    }
  };

  describe(`adapter contract: ${name}`, () => {
    coreContract(withApp);
    modesContract(withApp);
    describe('concurrency limits', () => concurrencyContract(withApp));
    describe('refunds and lockouts', () => refundContract(withApp));
    describe('clients that leave before their response', () => abortContract(withApp));
    describe('framework idioms', () => idiomsContract(withApp, capabilities));
  });
}
