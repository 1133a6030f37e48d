// The simulation's results as markdown: one table per scenario, a row per limit and phase.
import { medianServiceMs } from './service-model.js';
import type { ContenderResult, ScenarioResult } from './simulate-scenario.js';

const HEADER = [
  '| Limit | Phase | Goodput, req/s (% of capacity) | p50 | p99 | Rejected | Timed out | Limit settled at | Settled after |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];

/** The tables of `results`, each under a heading that gives the scenario and the service it ran against. */
export function markdownReport(results: readonly ScenarioResult[]): string {
  return results.map(scenarioTable).join('\n\n');
}

function scenarioTable(result: ScenarioResult): string {
  const { service } = result;
  const recovery = result.recoveryPhase === undefined ? [] : [recoveryLine(result)];
  return [
    `### ${result.title}`,
    '',
    `${service.workers} workers, log-normal service time (median ${ms(medianServiceMs(service))}, mean ` +
      `${ms(service.meanServiceMs)}, sigma ${service.sigma}): capacity ${Math.round(result.capacityPerSecond)} ` +
      `req/s, unloaded p99 ${ms(result.unloadedP99Ms)} (bound: ${ms(2 * result.unloadedP99Ms)}), timeout ` +
      `${ms(service.timeoutMs)}.`,
    '',
    ...HEADER,
    ...result.contenders.flatMap((contender) => rows(contender)),
    ...recovery,
  ].join('\n');
}

function rows(contender: ContenderResult): string[] {
  return contender.phases.map((phase, i) =>
    [
      i === 0 ? contender.label : '',
      phase.label,
      `${Math.round(phase.goodputPerSecond)} (${Math.round(phase.goodputShare * 100)}%)`,
      phase.p50Ms === null ? '–' : ms(phase.p50Ms),
      phase.p99Ms === null ? '–' : ms(phase.p99Ms),
      percent(phase.rejectedShare),
      percent(phase.timedOutShare),
      String(phase.settledLimit),
      phase.convergenceMs === null ? 'not settled' : seconds(phase.convergenceMs),
    ].reduce((row, cell) => `${row} ${cell} |`, '|'),
  );
}

function recoveryLine(result: ScenarioResult): string {
  const phase = result.phases[result.recoveryPhase as number];
  const times = result.contenders.map(
    ({ label, recoveryMs }) =>
      `${label} ${recoveryMs === null || recoveryMs === undefined ? 'not within the phase' : seconds(recoveryMs)}`,
  );
  return (
    `\nBack within ±10% of the limit settled in the first phase, after the start of "${phase?.label}": ` +
    `${times.join('; ')}.`
  );
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

function seconds(valueMs: number): string {
  return `${(valueMs / 1000).toFixed(1)} s`;
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}
