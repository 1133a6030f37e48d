// Prints the adaptive limits' simulation as markdown tables, the ones docs/adaptive.md shows.
// Run: npm run adaptive:table
import { markdownReport } from '../src/adaptive/simulation/report.js';
import { SCENARIOS } from '../src/adaptive/simulation/scenarios.js';
import { simulateScenario } from '../src/adaptive/simulation/simulate-scenario.js';

process.stdout.write(`${markdownReport(SCENARIOS.map((scenario) => simulateScenario(scenario)))}\n`);
