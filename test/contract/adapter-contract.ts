// The one contract every adapter passes over real HTTP: same answers, same headers, same failure modes.
import { describe } from 'node:test';
import { coreContract } from './adapter-contract-core.js';
import type { ContractApp, ContractOptions, MakeApp } from './adapter-contract-http.js';
import { concurrencyContract, refundContract } from './adapter-contract-shaping.js';

export { silentLogger, unitsLeft } from './adapter-contract-fixtures.js';
export {
  CLIENT,
  type ContractApp,
  listen,
  type MakeApp,
  type RoutePlan,
  request,
  STREAMED,
  streamedChunks,
} from './adapter-contract-http.js';

export function runAdapterContract(name: string, makeApp: MakeApp): void {
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
    describe('concurrency limits', () => concurrencyContract(withApp));
    describe('refunds and lockouts', () => refundContract(withApp));
  });
}
