// A scenario run through every contender: the figures the table, the page and the tests read.
import { measure, type PhaseResult, recoveryMs } from './measure.js';
import { type Contender, runContender, type Scenario, scenarioArrivals } from './run-simulation.js';
import { contenders } from './scenarios.js';
import { capacityPerSecond, type ServiceModel, unloadedP99Ms } from './service-model.js';
import type { Series } from './tally.js';
import type { Phase } from './traffic.js';

export interface ContenderResult {
  readonly label: string;
  readonly phases: readonly PhaseResult[];
  /**
   * For a scenario with a recovery phase: how long into it the limit took to come back within ±10% of where it
   * settled in the first phase (null: it did not); undefined otherwise.
   */
  readonly recoveryMs: number | null | undefined;
  readonly series: Series;
}

export interface ScenarioResult {
  readonly name: string;
  readonly title: string;
  readonly service: ServiceModel;
  readonly phases: readonly Phase[];
  readonly recoveryPhase: number | undefined;
  /** Requests per second the service completes with every worker busy. */
  readonly capacityPerSecond: number;
  /** The p99 of the service time alone: the latency bound is twice it. */
  readonly unloadedP99Ms: number;
  readonly contenders: readonly ContenderResult[];
}

/** Runs `scenario` through each of `compared` (by default the algorithms and the two fixed limits) on the same arrivals. */
export function simulateScenario(
  scenario: Scenario,
  compared: readonly Contender[] = contenders(scenario.service),
): ScenarioResult {
  const traffic = scenarioArrivals(scenario);
  const { recoveryPhase } = scenario;
  return {
    name: scenario.name,
    title: scenario.title,
    service: scenario.service,
    phases: scenario.phases,
    recoveryPhase,
    capacityPerSecond: capacityPerSecond(scenario.service),
    unloadedP99Ms: unloadedP99Ms(scenario.service),
    contenders: compared.map((contender) => {
      const run = runContender(scenario, contender, traffic);
      return {
        label: contender.label,
        phases: measure(scenario, run),
        recoveryMs: recoveryPhase === undefined ? undefined : recoveryMs(scenario, run, recoveryPhase),
        series: run.series,
      };
    }),
  };
}
