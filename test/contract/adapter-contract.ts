// The one contract every adapter passes over real HTTP: same answers, same headers, same failure modes.
import { describe } from 'node:test';
import { abortContract } from './adapter-contract-aborts.js';
import { coreContract } from './adapter-contract-core.js';
import type { AdapterCapabilities, ContractApp, ContractOptions, MakeApp } from './adapter-contract-http.js';
import { idiomsContract } from './adapter-contract-idioms.js';
import { concurrencyContract, refundContract } from './adapter-contract-shaping.js';

export { silentLogger, unitsLeft } from './adapter-contract-fixtures.js';
export {
  type AdapterCapabilities,
  CLIENT,
  type ContractApp,
  type Figures,
  listen,
  type MakeApp,
  type RoutePlan,
  request,
  STREAMED,
  shapedByApp,
  streamedChunks,
} from './adapter-contract-http.js';

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
    describe('concurrency limits', () => concurrencyContract(withApp));
    describe('refunds and lockouts', () => refundContract(withApp));
    describe('clients that leave before their response', () => abortContract(withApp));
    describe('framework idioms', () => idiomsContract(withApp, capabilities));
  });
}
