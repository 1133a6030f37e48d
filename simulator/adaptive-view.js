// The Adaptive limits tab: runs a named scenario on the server (POST /api/adaptive) and shows, for each limit
// compared, its goodput, latency and refusals phase by phase, and a chart of its limit, in-flight and latency.
import { ADAPTIVE_CHART_HEIGHT, adaptiveChart } from './charts.js';
import { $, el, postRun, setStatus } from './dom.js';

let charts = [];
let latestRun = 0;

const chartWidth = () => $('#adaptive-charts').clientWidth - 2;

/** Offers the server's scenarios; Run stays disabled until there is one to pick. */
export async function loadAdaptiveScenarios() {
  let scenarios;
  try {
    const response = await fetch('/api/adaptive/scenarios');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    scenarios = await response.json();
  } catch (error) {
    setStatus($('#adaptive-status'), 'error', `The scenarios could not be loaded: ${error.message}`);
    return false;
  }
  $('#adaptive-scenario').replaceChildren(
    ...scenarios.map(({ name, title }) => el('option', { value: name }, title)),
  );
  $('#adaptive-form button[type=submit]').disabled = scenarios.length === 0;
  return scenarios.length > 0;
}

export async function runAdaptive() {
  const runId = ++latestRun;
  const status = $('#adaptive-status');
  const answer = await postRun(
    '/api/adaptive',
    { scenario: $('#adaptive-scenario').value },
    status,
    () => runId === latestRun,
  );
  if (answer === undefined) return;
  renderTable(answer);
  renderCharts(answer);
  const { service } = answer;
  setStatus(
    status,
    'done',
    `${service.workers} workers, capacity ${Math.round(answer.capacityPerSecond)} requests/s, unloaded p99 ` +
      `${Math.round(answer.unloadedP99Ms)} ms (bound ${Math.round(2 * answer.unloadedP99Ms)} ms), timeout ` +
      `${service.timeoutMs} ms.`,
  );
}

function renderTable(answer) {
  const bound = 2 * answer.unloadedP99Ms;
  $('#adaptive-body').replaceChildren(
    ...answer.contenders.flatMap((contender, i) =>
      contender.phases.map((phase, j) => {
        const cell = (name, text, attributes = {}) =>
          el('td', { class: 'num', 'data-testid': `adaptive-${i}-${j}-${name}`, ...attributes }, text);
        return el(
          'tr',
          { 'data-testid': `adaptive-${i}-${j}` },
          j === 0 ? el('th', { scope: 'row', rowspan: contender.phases.length }, contender.label) : undefined,
          el('td', {}, phase.label),
          cell('goodput', `${Math.round(phase.goodputPerSecond)} (${Math.round(phase.goodputShare * 100)}%)`),
          cell('p50', milliseconds(phase.p50Ms)),
          cell('p99', milliseconds(phase.p99Ms), {
            class: phase.p99Ms !== null && phase.p99Ms > bound ? 'num over' : 'num',
          }),
          cell('rejected', percent(phase.rejectedShare)),
          cell('timed-out', percent(phase.timedOutShare)),
          cell('limit', String(phase.settledLimit)),
          cell('settled', phase.convergenceMs === null ? 'not settled' : seconds(phase.convergenceMs)),
        );
      }),
    ),
  );
}

function renderCharts(answer) {
  for (const chart of charts) chart.destroy();
  const container = $('#adaptive-charts');
  container.replaceChildren();
  const width = chartWidth();
  charts = answer.contenders.map((contender, i) => {
    const holder = el('figure', { class: 'chart', 'data-testid': `adaptive-chart-${i}` });
    container.append(holder);
    return adaptiveChart(contender, answer, width, holder);
  });
}

/** A hidden tab measures 0 wide; its charts keep their size until it is shown again. */
export function resizeAdaptiveCharts() {
  const width = chartWidth();
  if (width > 0) for (const chart of charts) chart.setSize({ width, height: ADAPTIVE_CHART_HEIGHT });
}

const milliseconds = (value) => (value === null ? '–' : `${Math.round(value)} ms`);
const seconds = (valueMs) => `${(valueMs / 1000).toFixed(1)} s`;
const percent = (share) => `${(share * 100).toFixed(1)}%`;
