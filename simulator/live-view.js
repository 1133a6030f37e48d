// The Live requests tab: real requests from this browser to the server's rate-limited routes, charted as they answer.
import { LIVE_CHART_HEIGHT, liveChart } from './charts.js';
import { $, el, setStatus } from './dom.js';

const LIVE_MAX_REQUESTS = 200;

/** The current or last run; undefined until the first Start. */
let live;

function stopLive(message) {
  if (live === undefined) return;
  clearTimeout(live.timer);
  live.stopped = true;
  $('#live-stop').disabled = true;
  $('#live-form button[type=submit]').disabled = false;
  if (message !== undefined) setStatus($('#live-status'), 'done', message);
}

/** The Stop button, enabled only while a run is going. */
export function stopLiveByHand() {
  stopLive(`Stopped after ${live.sent} requests.`);
}

/** Offers the server's rate-limited routes; Start stays disabled until there is one to pick. */
export async function loadLiveRoutes() {
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

export function startLive() {
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
    chart: liveChart($('#live-chart').clientWidth, $('#live-chart')),
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

/** A hidden tab measures 0 wide; the chart keeps its size until it is shown again. */
export function resizeLiveChart() {
  if (live === undefined) return;
  const width = $('#live-chart').clientWidth;
  if (width > 0) live.chart.setSize({ width, height: LIVE_CHART_HEIGHT });
}
