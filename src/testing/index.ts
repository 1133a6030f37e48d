// `tollgate/testing`: the suites a custom store or adapter must pass, registered with node:test by the author's tests.

export { runAdapterContract } from './adapter-contract.js';
export {
  type AdapterCapabilities,
  CLIENT,
  type ContractAnswer,
  type ContractApp,
  type ContractOptions,
  type Figures,
  listen,
  type MakeApp,
  type RoutePlan,
  STREAMED,
  shapedByApp,
  streamedChunks,
} from './adapter-contract-http.js';
export {
  type MakeStore,
  runStoreContract,
  type StoreContractOptions,
  type StoreFixture,
} from './store-contract.js';
