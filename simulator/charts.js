// uPlot charts: one per simulated policy, and the live responses chart, with their data laid out as uPlot reads it.
// The vendored uPlot is a classic script (index.html loads it first) that defines this global.
const { uPlot } = globalThis;

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
export const CHART_HEIGHT = 230;
export const LIVE_CHART_HEIGHT = CHART_HEIGHT + 40;

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

/** Both kinds of chart share the time axis, a left axis for the level and a right one for Retry-After. */
function axes(levelLabel) {
  return [
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
  ];
}

/** Retry-After's scale: from 0, with headroom above the longest wait. */
function waitScale() {
  return { range: (_u, _min, max) => [0, Math.max(1, (max ?? 0) * 1.15)] };
}

/** The chart of one policy's result from POST /api/simulate, drawn into `holder`. */
export function policyChart(result, title, width, holder) {
  const { policy } = result;
  const levelLabel = result.level === 'tokens' ? 'tokens left' : 'units in window';
  return new uPlot(
    {
      title,
      width,
      height: CHART_HEIGHT,
      cursor: { sync: { key: 'simulation' }, dataIdx: nearestDot(3) },
      scales: {
        x: { time: false },
        y: { range: (_u, _min, max) => [0, Math.max(policy.limit, max ?? 0) + 1] },
        wait: waitScale(),
      },
      axes: axes(levelLabel),
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
}

/**
 * An empty chart of real responses, drawn into `holder`; its data is
 * [time (s), remaining, remaining if 2xx, remaining if 429, Retry-After (s)], one row per response.
 */
export function liveChart(width, holder) {
  return new uPlot(
    {
      title: 'Real responses',
      width,
      height: LIVE_CHART_HEIGHT,
      cursor: { dataIdx: nearestDot(2) },
      scales: {
        x: { time: false },
        y: { range: (_u, _min, max) => [0, Math.max(1, max ?? 0) + 1] },
        wait: waitScale(),
      },
      axes: axes('RateLimit-Remaining'),
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
    holder,
  );
}
