// The Simulate tab: posts the scenario to POST /api/simulate and shows the answer as a summary table and charts.
import { CHART_HEIGHT, policyChart } from './charts.js';
import { describePolicy, formatDuration } from './describe.js';
import { $, el, postRun, setStatus } from './dom.js';
import { scenario } from './forms.js';

let charts = [];
let latestRun = 0;

/** The charts' figures have a 1 px border on each side. */
const chartWidth = () => $('#charts').clientWidth - 2;

export async function runSimulation() {
  const runId = ++latestRun;
  const status = $('#sim-status');
  const answer = await postRun('/api/simulate', scenario(), status, () => runId === latestRun);
  if (answer === undefined) return;
  renderSummary(answer);
  renderCharts(answer);
  const last = answer.arrivals.at(-1) ?? 0;
  setStatus(
    status,
    'done',
    `${answer.arrivals.length} requests over ${formatDuration(last)}, cost ${answer.cost} each, ` +
      `against ${answer.policies.length} policies.`,
  );
}

function renderSummary(answer) {
  $('#summary-body').replaceChildren(
    ...answer.policies.map((result, i) => {
      const { policy, summary } = result;
      const cell = (name, ...content) =>
        el('td', { class: 'num', 'data-testid': `summary-${i}-${name}` }, ...content);
      const muted = (name, text) =>
        el('span', { class: 'muted', 'data-testid': `summary-${i}-${name}` }, text);
      return el(
        'tr',
        { 'data-testid': `summary-${i}` },
        el(
          'th',
          { scope: 'row', 'data-testid': `summary-${i}-policy` },
          `${i + 1}. ${describePolicy(result)}`,
        ),
        cell('admitted', String(summary.admitted)),
        cell(
          'rejected',
          String(summary.rejected),
          summary.rejectedByLockout === undefined
            ? undefined
            : muted('locked-out', ` (${summary.rejectedByLockout} while locked out)`),
        ),
        // A leased policy (a concurrency limit) has no window: its summary counts what it held at once.
        summary.maxInFlight !== undefined
          ? inFlightCell(cell, muted, summary)
          : windowCell(cell, policy, summary),
        cell(
          'longest-wait',
          `${summary.longestRetryAfterMs} ms`,
          summary.rejectedForever > 0
            ? muted('never', ` (+${summary.rejectedForever} told never)`)
            : undefined,
        ),
      );
    }),
  );
}

function windowCell(cell, policy, summary) {
  return cell(
    'max-in-window',
    String(summary.maxAdmittedInWindow),
    el(
      'span',
      { class: 'muted' },
      policy.windowMs > 0 ? ` in ${formatDuration(policy.windowMs)}` : ' in the whole run',
    ),
  );
}

/** A concurrency limit has no window: the most requests it let run at once, and any that outlived their lease. */
function inFlightCell(cell, muted, summary) {
  return cell(
    'max-in-flight',
    String(summary.maxInFlight),
    el('span', { class: 'muted' }, ' in flight at once'),
    summary.leaseExpiries > 0
      ? muted('lease-expiries', ` (${summary.leaseExpiries} outlived their lease)`)
      : undefined,
  );
}

function renderCharts(answer) {
  for (const chart of charts) chart.destroy();
  const container = $('#charts');
  container.replaceChildren();
  const width = chartWidth();
  charts = answer.policies.map((result, i) => {
    const holder = el('figure', { class: 'chart', 'data-testid': `chart-${i}` });
    container.append(holder);
    return policyChart(result, `${i + 1}. ${describePolicy(result)}`, width, holder);
  });
}

/** A hidden tab measures 0 wide; its charts keep their size until it is shown again. */
export function resizeSimulationCharts() {
  const width = chartWidth();
  if (width > 0) for (const chart of charts) chart.setSize({ width, height: CHART_HEIGHT });
}
