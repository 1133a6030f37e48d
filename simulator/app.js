// The simulator page's script: turns the form into a scenario for POST /api/simulate and charts the library's answers.
// The vendored uPlot is a classic script (index.html loads it first) that defines this global.
const { uPlot } = globalThis;

/** Policy kinds and their fields: [option, label, default]. Durations accept ms or strings such as '10s'. */
const POLICY_KINDS = {
  'fixed-window': {
    label: 'Fixed window',
    fields: [
      ['limit', 'Limit', '5'],
      ['windowMs', 'Window (ms or 10s)', '10s'],
    ],
  },
  'sliding-window': {
    label: 'Sliding window (log)',
    fields: [
      ['limit', 'Limit', '5'],
      ['windowMs', 'Window (ms or 10s)', '10s'],
    ],
  },
  'sliding-window-counter': {
    label: 'Sliding window counter',
    fields: [
      ['limit', 'Limit', '5'],
      ['windowMs', 'Window (ms or 10s)', '10s'],
    ],
  },
  'token-bucket': {
    label: 'Token bucket',
    fields: [
      ['capacity', 'Capacity', '5'],
      ['refillPerSecond', 'Refill per second', '1'],
    ],
  },
};

const PATTERNS = {
  'boundary-burst': {
    label: 'Window-boundary burst',
    hint:
      'One request at 0 opens the window (Tollgate anchors windows at a client’s first request), then Limit ' +
      'requests just before the boundary at Window and Limit just after it. Blank spacing: a twentieth of the ' +
      'window shared among the Limit requests.',
    fields: [
      ['limit', 'Limit', '5'],
      ['windowMs', 'Window (ms or 10s)', '10s'],
      ['spacingMs', 'Spacing (ms, optional)', ''],
    ],
  },
  steady: {
    label: 'Steady rate',
    hint: 'Evenly spaced requests, the first at 0.',
    fields: [
      ['ratePerSecond', 'Requests per second', '1'],
      ['durationMs', 'Duration (ms or 30s)', '30s'],
    ],
  },
  bursts: {
    label: 'Periodic bursts',
    hint: 'Burst size requests every period, the first burst at 0, spacing ms apart within a burst.',
    fields: [
      ['size', 'Burst size', '8'],
      ['everyMs', 'Every (ms or 10s)', '10s'],
      ['durationMs', 'Duration (ms or 60s)', '40s'],
      ['spacingMs', 'Spacing (ms)', '50'],
    ],
  },
  random: {
    label: 'Random arrivals',
    hint: 'Poisson arrivals at a mean rate; the same seed always gives the same times.',
    fields: [
      ['meanRatePerSecond', 'Mean per second', '1'],
      ['durationMs', 'Duration (ms or 60s)', '40s'],
      ['seed', 'Seed', '1'],
    ],
  },
  ramp: {
    label: 'Ramp',
    hint: 'A rate rising (or falling) linearly over the duration.',
    fields: [
      ['fromRatePerSecond', 'From per second', '0.2'],
      ['toRatePerSecond', 'To per second', '2'],
      ['durationMs', 'Duration (ms or 60s)', '40s'],
    ],
  },
  custom: {
    label: 'Paste arrival times',
    hint: 'Milliseconds from the start, ascending, separated by commas, spaces or new lines.',
    fields: [],
  },
};

const COLORS = {
  level: '#0969da',
  levelFill: 'rgba(9, 105, 218, 0.08)',
  limit: '#6e7781',
  allowed: '#1a7f37',
  rejected: '#cf222e',
  wait: '#bf8700',
  grid: '#eaeef2',
  axis: '#24292f',
};
const CHART_HEIGHT = 230;
const LIVE_MAX_REQUESTS = 200;

const $ = (selector) => document.querySelector(selector);
/** The charts' figures have a 1 px border on each side. */
const chartWidth = () => $('#charts').clientWidth - 2;

/** A DOM element with attributes and children (strings become text nodes, never HTML). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  node.append(...children.filter((child) => child !== undefined && child !== null));
  return node;
}

/** Form text to JSON as typed: numbers stay numbers, anything else goes as a string for the library to judge. */
function jsonValue(raw) {
  const text = raw.trim();
  if (text === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

function formatDuration(ms) {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1000) return `${Number((ms / 1000).toFixed(3))} s`;
  return `${ms} ms`;
}

function describePolicy(policy) {
  const label = POLICY_KINDS[policy.kind].label;
  if (policy.kind === 'token-bucket') {
    return policy.windowMs > 0
      ? `${label}: capacity ${policy.limit}, empty to full in ${formatDuration(policy.windowMs)}`
      : `${label}: capacity ${policy.limit}, never refills`;
  }
  return `${label}: ${policy.limit} per ${formatDuration(policy.windowMs)}`;
}

// ---- Scenario form ---------------------------------------------------------------------------------------

const policies = [
  { kind: 'fixed-window', values: {} },
  { kind: 'sliding-window', values: {} },
  { kind: 'token-bucket', values: {} },
];

function renderPolicies() {
  const list = $('#policy-list');
  list.replaceChildren(
    ...policies.map((policy, i) => {
      const kindSelect = el(
        'select',
        { 'data-testid': `policy-${i}-kind` },
        ...Object.entries(POLICY_KINDS).map(([kind, { label }]) =>
          el('option', { value: kind, selected: kind === policy.kind }, label),
        ),
      );
      kindSelect.addEventListener('change', () => {
        policy.kind = kindSelect.value;
        renderPolicies();
      });
      const remove = el(
        'button',
        {
          type: 'button',
          class: 'icon',
          'data-testid': `policy-${i}-remove`,
          'aria-label': `Remove policy ${i + 1}`,
          title: 'Remove',
          disabled: policies.length <= 2,
        },
        '×',
      );
      remove.addEventListener('click', () => {
        policies.splice(i, 1);
        renderPolicies();
      });
      const fields = POLICY_KINDS[policy.kind].fields.map(([option, label, fallback]) => {
        const input = el('input', {
          'data-testid': `policy-${i}-${option}`,
          value: policy.values[option] ?? fallback,
        });
        input.addEventListener('input', () => {
          policy.values[option] = input.value;
        });
        return el('label', { class: 'field' }, el('span', {}, label), input);
      });
      return el(
        'div',
        { class: 'policy-card', 'data-testid': `policy-${i}` },
        el('div', { class: 'policy-head' }, el('strong', {}, `Policy ${i + 1}`), remove),
        el('label', { class: 'field' }, el('span', {}, 'Algorithm'), kindSelect),
        ...fields,
      );
    }),
  );
  $('#add-policy').disabled = policies.length >= 4;
}

function policySpec(policy) {
  const spec = { kind: policy.kind };
  for (const [option, , fallback] of POLICY_KINDS[policy.kind].fields) {
    const value = jsonValue(policy.values[option] ?? fallback);
    if (value !== undefined) spec[option] = value;
  }
  return spec;
}

function renderPatternParams() {
  const kind = $('#pattern-kind').value;
  const pattern = PATTERNS[kind];
  $('#pattern-hint').textContent = pattern.hint;
  const fields = pattern.fields.map(([option, label, fallback]) =>
    el(
      'label',
      { class: 'field' },
      el('span', {}, label),
      el('input', { 'data-testid': `pattern-${option}`, name: option, value: fallback }),
    ),
  );
  if (kind === 'custom') {
    fields.push(
      el(
        'label',
        { class: 'field wide' },
        el('span', {}, 'Arrival times (ms)'),
        el(
          'textarea',
          { 'data-testid': 'pattern-arrivals', name: 'arrivals', rows: 4 },
          '0, 100, 200, 9900, 10000',
        ),
      ),
    );
  }
  $('#pattern-params').replaceChildren(...fields);
}

function scenario() {
  const kind = $('#pattern-kind').value;
  const body = { policies: policies.map(policySpec) };
  const cost = jsonValue($('#cost').value);
  if (cost !== undefined) body.cost = cost;
  if (kind === 'custom') {
    const text = $('#pattern-params textarea').value.trim();
    body.arrivals = text === '' ? [] : text.split(/[\s,;]+/).map((t) => jsonValue(t) ?? t);
  } else {
    body.pattern = { kind };
    for (const input of $('#pattern-params').querySelectorAll('input')) {
      const value = jsonValue(input.value);
      if (value !== undefined) body.pattern[input.name] = value;
    }
  }
  return body;
}

// ---- Simulation results ----------------------------------------------------------------------------------

let charts = [];
let latestRun = 0;

function setStatus(node, state, text) {
  node.dataset.state = state;
  node.textContent = text;
}

async function run() {
  const runId = ++latestRun;
  const status = $('#sim-status');
  setStatus(status, 'running', 'Simulating…');
  let response;
  let answer;
  try {
    response = await fetch('/api/simulate', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(scenario()),
    });
    answer = await response.json();
  } catch (error) {
    if (runId === latestRun) setStatus(status, 'error', `The server could not be reached: ${error.message}`);
    return;
  }
  // A slower, older run must not overwrite a newer one.
  if (runId !== latestRun) return;
  if (!response.ok) {
    setStatus(status, 'error', `${answer.error} (${answer.code})`);
    return;
  }
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
    ...answer.policies.map(({ policy, summary }, i) => {
      const cell = (name, ...content) =>
        el('td', { class: 'num', 'data-testid': `summary-${i}-${name}` }, ...content);
      return el(
        'tr',
        { 'data-testid': `summary-${i}` },
        el(
          'th',
          { scope: 'row', 'data-testid': `summary-${i}-policy` },
          `${i + 1}. ${describePolicy(policy)}`,
        ),
        cell('admitted', String(summary.admitted)),
        cell('rejected', String(summary.rejected)),
        cell(
          'max-in-window',
          String(summary.maxAdmittedInWindow),
          el(
            'span',
            { class: 'muted' },
            policy.windowMs > 0 ? ` in ${formatDuration(policy.windowMs)}` : ' in the whole run',
          ),
        ),
        cell(
          'longest-wait',
          `${summary.longestRetryAfterMs} ms`,
          summary.rejectedForever > 0
            ? el(
                'span',
                { class: 'muted', 'data-testid': `summary-${i}-never` },
                ` (+${summary.rejectedForever} told never)`,
              )
            : undefined,
        ),
      );
    }),
  );
}

/** Merges the level samples and the requests into one time axis (samples first at equal times). */
function chartData({ policy, levels, timeline }) {
  const x = [];
  const level = [];
  const allowed = [];
  const rejected = [];
  const wait = [];
  let s = 0;
  let r = 0;
  while (s < levels.length || r < timeline.length) {
    const sample = levels[s];
    const request = timeline[r];
    if (request === undefined || (sample !== undefined && sample.timeMs <= request.timeMs)) {
      x.push(sample.timeMs / 1000);
      level.push(sample.level);
      allowed.push(null);
      rejected.push(null);
      wait.push(null);
      s++;
    } else {
      x.push(request.timeMs / 1000);
      level.push(request.level);
      allowed.push(request.allowed ? request.level : null);
      rejected.push(request.allowed ? null : request.level);
      wait.push(!request.allowed && request.retryAfterMs >= 0 ? request.retryAfterMs / 1000 : null);
      r++;
    }
  }
  // The limit is drawn as a constant dashed line: capacity for a bucket, limit for a window.
  return [x, level, x.map(() => policy.limit), allowed, rejected, wait];
}

/**
 * uPlot reads every series at the row under the cursor, which for request dots is mostly a level sample with no
 * request. Dot series (from `firstDotSeries` on) read the nearest request within 12 px instead, so the legend
 * shows it.
 */
function nearestDot(firstDotSeries) {
  return (u, seriesIdx, hoveredIdx, cursorX) => {
    if (seriesIdx < firstDotSeries) return hoveredIdx;
    const xs = u.data[0];
    const ys = u.data[seriesIdx];
    const reach = Math.abs(u.posToVal(12, 'x') - u.posToVal(0, 'x'));
    let best = hoveredIdx;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (let i = hoveredIdx; i >= 0 && cursorX - xs[i] <= reach; i--) {
      if (ys[i] !== null && cursorX - xs[i] < bestDistance) [best, bestDistance] = [i, cursorX - xs[i]];
    }
    for (let i = hoveredIdx + 1; i < xs.length && xs[i] - cursorX <= reach; i++) {
      if (ys[i] !== null && xs[i] - cursorX < bestDistance) [best, bestDistance] = [i, xs[i] - cursorX];
    }
    return best;
  };
}

function pointSeries(label, color, scale = 'y', size = 8) {
  return {
    label,
    scale,
    stroke: color,
    fill: color,
    paths: () => null,
    points: { show: true, size, width: 1, stroke: color, fill: color },
  };
}

function renderCharts(answer) {
  for (const chart of charts) chart.destroy();
  const container = $('#charts');
  container.replaceChildren();
  const width = chartWidth();
  charts = answer.policies.map((result, i) => {
    const { policy } = result;
    const levelLabel = result.level === 'tokens' ? 'tokens left' : 'units in window';
    const holder = el('figure', { class: 'chart', 'data-testid': `chart-${i}` });
    container.append(holder);
    return new uPlot(
      {
        title: `${i + 1}. ${describePolicy(policy)}`,
        width,
        height: CHART_HEIGHT,
        cursor: { sync: { key: 'simulation' }, dataIdx: nearestDot(3) },
        scales: {
          x: { time: false },
          y: { range: (_u, _min, max) => [0, Math.max(policy.limit, max ?? 0) + 1] },
          wait: { range: (_u, _min, max) => [0, Math.max(1, (max ?? 0) * 1.15)] },
        },
        axes: [
          { label: 'time since start (s)', stroke: COLORS.axis, grid: { stroke: COLORS.grid } },
          { label: levelLabel, stroke: COLORS.axis, grid: { stroke: COLORS.grid }, size: 56 },
          {
            label: 'Retry-After (s)',
            scale: 'wait',
            side: 1,
            stroke: COLORS.wait,
            grid: { show: false },
            size: 56,
          },
        ],
        series: [
          { label: 'time (s)' },
          {
            label: levelLabel,
            stroke: COLORS.level,
            fill: COLORS.levelFill,
            width: 2,
            paths: uPlot.paths.stepped({ align: 1 }),
            points: { show: false },
          },
          {
            label: policy.kind === 'token-bucket' ? 'capacity' : 'limit',
            stroke: COLORS.limit,
            dash: [6, 4],
            points: { show: false },
          },
          pointSeries('admitted', COLORS.allowed),
          pointSeries('rejected', COLORS.rejected),
          pointSeries('Retry-After (s)', COLORS.wait, 'wait', 6),
        ],
      },
      chartData(result),
      holder,
    );
  });
}

// ---- Live mode -------------------------------------------------------------------------------------------

let live;

function liveChart(width) {
  return new uPlot(
    {
      title: 'Real responses',
      width,
      height: CHART_HEIGHT + 40,
      cursor: { dataIdx: nearestDot(2) },
      scales: {
        x: { time: false },
        y: { range: (_u, _min, max) => [0, Math.max(1, max ?? 0) + 1] },
        wait: { range: (_u, _min, max) => [0, Math.max(1, (max ?? 0) * 1.15)] },
      },
      axes: [
        { label: 'time since start (s)', stroke: COLORS.axis, grid: { stroke: COLORS.grid } },
        { label: 'RateLimit-Remaining', stroke: COLORS.axis, grid: { stroke: COLORS.grid }, size: 56 },
        {
          label: 'Retry-After (s)',
          scale: 'wait',
          side: 1,
          stroke: COLORS.wait,
          grid: { show: false },
          size: 56,
        },
      ],
      series: [
        { label: 'time (s)' },
        {
          label: 'remaining',
          stroke: COLORS.level,
          width: 2,
          paths: uPlot.paths.stepped({ align: 1 }),
          points: { show: false },
        },
        pointSeries('2xx', COLORS.allowed),
        pointSeries('429', COLORS.rejected),
        pointSeries('Retry-After (s)', COLORS.wait, 'wait', 6),
      ],
    },
    [[], [], [], [], []],
    $('#live-chart'),
  );
}

function stopLive(message) {
  if (live === undefined) return;
  clearTimeout(live.timer);
  live.stopped = true;
  $('#live-stop').disabled = true;
  $('#live-form button[type=submit]').disabled = false;
  if (message !== undefined) setStatus($('#live-status'), 'done', message);
}

/** Offers the server's rate-limited routes; Start stays disabled until there is one to pick. */
async function loadLiveRoutes() {
  let routes;
  try {
    const response = await fetch('/api/live-routes');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    routes = await response.json();
  } catch (error) {
    setStatus($('#live-status'), 'error', `The live routes could not be loaded: ${error.message}`);
    return;
  }
  $('#live-endpoint').replaceChildren(
    ...routes.map(({ path, label }) => el('option', { value: path }, `${path}: ${label}`)),
  );
  $('#live-form button[type=submit]').disabled = routes.length === 0;
}

function startLive() {
  stopLive();
  live?.chart.destroy();
  const endpoint = $('#live-endpoint').value;
  const count = Math.min(LIVE_MAX_REQUESTS, Math.max(1, Math.floor(Number($('#live-count').value) || 1)));
  const rate = Math.min(20, Math.max(0.2, Number($('#live-rate').value) || 1));
  const data = [[], [], [], [], []];
  const state = {
    endpoint,
    count,
    sent: 0,
    received: 0,
    started: performance.now(),
    data,
    chart: liveChart($('#live-chart').clientWidth),
    timer: undefined,
    stopped: false,
  };
  live = state;
  $('#live-body').replaceChildren();
  $('#live-stop').disabled = false;
  $('#live-form button[type=submit]').disabled = true;
  setStatus($('#live-status'), 'running', `Sending ${count} requests to ${endpoint} at ${rate} per second…`);

  const fire = async () => {
    if (state.stopped || state.sent >= count) return;
    const n = ++state.sent;
    if (state.sent < count) state.timer = setTimeout(fire, 1000 / rate);
    let response;
    try {
      response = await fetch(endpoint, { cache: 'no-store' });
    } catch (error) {
      stopLive(`Request ${n} failed: ${error.message}`);
      return;
    }
    if (live !== state) return;
    // Plotted at the moment each answer arrives, so the x axis stays in order however the requests overlap.
    const at = (performance.now() - state.started) / 1000;
    const remaining = response.headers.get('RateLimit-Remaining');
    const retryAfter = response.headers.get('Retry-After');
    const remainingValue = remaining === null ? null : Number(remaining);
    data[0].push(at);
    data[1].push(remainingValue);
    data[2].push(response.ok ? remainingValue : null);
    data[3].push(response.status === 429 ? (remainingValue ?? 0) : null);
    data[4].push(retryAfter === null ? null : Number(retryAfter));
    state.chart.setData(data);
    $('#live-body').prepend(
      el(
        'tr',
        { class: response.ok ? 'ok' : 'limited' },
        el('td', { class: 'num' }, String(n)),
        el('td', { class: 'num' }, at.toFixed(2)),
        el('td', { class: 'num' }, String(response.status)),
        el('td', { class: 'num' }, remaining ?? '—'),
        el('td', { class: 'num' }, retryAfter ?? '—'),
      ),
    );
    state.received++;
    if (state.received === count) stopLive(`Done: ${count} responses from ${endpoint}.`);
  };
  fire();
}

// ---- Wiring ----------------------------------------------------------------------------------------------

function showTab(name) {
  for (const tab of document.querySelectorAll('.tab'))
    tab.setAttribute('aria-pressed', String(tab.dataset.tab === name));
  $('#simulate').hidden = name !== 'simulate';
  $('#live').hidden = name !== 'live';
}

for (const tab of document.querySelectorAll('.tab'))
  tab.addEventListener('click', () => showTab(tab.dataset.tab));
$('#pattern-kind').replaceChildren(
  ...Object.entries(PATTERNS).map(([kind, { label }]) => el('option', { value: kind }, label)),
);
$('#pattern-kind').addEventListener('change', renderPatternParams);
$('#add-policy').addEventListener('click', () => {
  policies.push({ kind: 'sliding-window-counter', values: {} });
  renderPolicies();
});
$('#scenario').addEventListener('submit', (event) => {
  event.preventDefault();
  run();
});
$('#live-form').addEventListener('submit', (event) => {
  event.preventDefault();
  startLive();
});
$('#live-stop').addEventListener('click', () => stopLive(`Stopped after ${live.sent} requests.`));
new ResizeObserver(() => {
  // A hidden tab measures 0 wide; its charts keep their size until it is shown again.
  const width = chartWidth();
  if (width > 0) for (const chart of charts) chart.setSize({ width, height: CHART_HEIGHT });
  if (live !== undefined && $('#live-chart').clientWidth > 0) {
    live.chart.setSize({ width: $('#live-chart').clientWidth, height: CHART_HEIGHT + 40 });
  }
}).observe(document.body);

renderPolicies();
renderPatternParams();
run();
loadLiveRoutes();
