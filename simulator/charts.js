// uPlot charts: one per simulated policy, the live responses chart, and one per adaptive limit, with their data laid
// out as uPlot reads it.
import { POLICY_KINDS } from './choices.js';

// The vendored uPlot is a classic script (index.html loads it first) that defines this global.
const { uPlot } = globalThis;

const COLORS = {
  level: '#0969da',
  levelFill: 'rgba(9, 105, 218, 0.08)',
  limit: '#6e7781',
  allowed: '#1a7f37',
  rejected: '#cf222e',
  wait: '#bf8700',
  lockout: '#8250df',
  lockoutBand: 'rgba(130, 80, 223, 0.14)',
  phaseBand: 'rgba(110, 119, 129, 0.08)',
  inFlightFill: 'rgba(26, 127, 55, 0.10)',
  grid: '#eaeef2',
  axis: '#24292f',
};
export const CHART_HEIGHT = 230;
export const LIVE_CHART_HEIGHT = CHART_HEIGHT + 40;

/**
 * Merges the level samples, a concurrency limit's releases and the requests into one time axis, at equal times in
 * the order the server evaluated them: releases, samples, requests. Its columns are [time (s), level, limit,
 * admitted, rejected (by the policy), Retry-After (s)], and with a lockout [rejected while locked out, locked out]
 * after them, the last one with no data (its legend reads the time).
 */
function chartData({ policy, levels, releases, timeline, blockMs }) {
  const rows = [
    ...releases.map((release) => ({ timeMs: release.timeMs, order: 0, level: release.level })),
    ...levels.map((sample) => ({ timeMs: sample.timeMs, order: 1, level: sample.level })),
    ...timeline.map((request) => ({ timeMs: request.timeMs, order: 2, level: request.level, request })),
  ];
  // Stable: each list is already in time order.
  rows.sort((a, b) => a.timeMs - b.timeMs || a.order - b.order);
  const dot = (request, wanted) => (request !== undefined && wanted(request) ? request.level : null);
  return [
    rows.map((row) => row.timeMs / 1000),
    rows.map((row) => row.level),
    // The limit is drawn as a constant dashed line: capacity for a bucket, limit for a window, max in flight.
    rows.map(() => policy.limit),
    rows.map(({ request }) => dot(request, (r) => r.allowed)),
    rows.map(({ request }) => dot(request, (r) => r.deniedBy === 'policy')),
    rows.map(({ request }) =>
      request !== undefined && !request.allowed && request.retryAfterMs >= 0
        ? request.retryAfterMs / 1000
        : null,
    ),
    ...(blockMs === undefined
      ? []
      : [rows.map(({ request }) => dot(request, (r) => r.deniedBy === 'lockout')), rows.map(() => null)]),
  ];
}

/** Paints each lockout as a band across the plot, under the grid and the series. */
function blockedBands(periods) {
  return (u) => {
    const { ctx, bbox } = u;
    ctx.save();
    ctx.fillStyle = COLORS.lockoutBand;
    for (const { fromMs, untilMs } of periods) {
      const left = Math.max(bbox.left, u.valToPos(fromMs / 1000, 'x', true));
      const right = Math.min(bbox.left + bbox.width, u.valToPos(untilMs / 1000, 'x', true));
      if (right > left) ctx.fillRect(left, bbox.top, right - left, bbox.height);
    }
    ctx.restore();
  };
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

const LEVEL_LABELS = {
  tokens: 'tokens left',
  'window-count': 'units in window',
  'in-flight': 'requests in flight',
};

/** The chart of one policy's result from POST /api/simulate, drawn into `holder`. */
export function policyChart(result, title, width, holder) {
  const { policy, blockedPeriods } = result;
  const levelLabel = LEVEL_LABELS[result.level];
  const lockout = result.blockMs !== undefined;
  const blockedAt = (seconds) =>
    blockedPeriods.some(({ fromMs, untilMs }) => fromMs / 1000 <= seconds && seconds < untilMs / 1000);
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
      hooks: { drawClear: [blockedBands(blockedPeriods)] },
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
          // Each kind names its limit itself (capacity, max in flight); a window's is its limit.
          label: POLICY_KINDS[policy.kind]?.limitLabel ?? 'limit',
          stroke: COLORS.limit,
          dash: [6, 4],
          points: { show: false },
        },
        pointSeries('admitted', COLORS.allowed),
        pointSeries(lockout ? 'rejected by the policy' : 'rejected', COLORS.rejected),
        pointSeries('Retry-After (s)', COLORS.wait, 'wait', 6),
        ...(lockout
          ? [
              pointSeries('rejected while locked out', COLORS.lockout),
              // No data of its own: its legend says whether the client is locked out at the cursor.
              {
                label: 'locked out',
                stroke: COLORS.lockout,
                fill: COLORS.lockoutBand,
                paths: () => null,
                points: { show: false },
                value: (u, _value, _series, idx) =>
                  idx === null ? '—' : blockedAt(u.data[0][idx]) ? 'yes' : 'no',
              },
            ]
          : []),
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

export const ADAPTIVE_CHART_HEIGHT = CHART_HEIGHT + 40;

/** Shades every other phase of an adaptive scenario, so that each step shows where it starts and ends. */
function phaseBands(phases) {
  const starts = [0];
  for (const phase of phases) starts.push(starts.at(-1) + phase.durationMs);
  return (u) => {
    const { ctx, bbox } = u;
    ctx.save();
    ctx.fillStyle = COLORS.phaseBand;
    for (let i = 1; i < phases.length; i += 2) {
      const left = u.valToPos(starts[i] / 1000, 'x', true);
      const right = u.valToPos(starts[i + 1] / 1000, 'x', true);
      ctx.fillRect(left, bbox.top, right - left, bbox.height);
    }
    ctx.restore();
  };
}

/**
 * The chart of one limit's run from POST /api/adaptive, drawn into `holder`: its limit and the requests in flight
 * under it on the left axis, the p50 and p99 latency of the answers in each sample's span on the right one, against
 * the bound of twice the unloaded p99.
 */
export function adaptiveChart(contender, scenario, width, holder) {
  const { timeMs, limit, inFlight, p50Ms, p99Ms } = contender.series;
  const bound = 2 * scenario.unloadedP99Ms;
  const { workers } = scenario.service;
  const stepped = { paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } };
  return new uPlot(
    {
      title: contender.label,
      width,
      height: ADAPTIVE_CHART_HEIGHT,
      cursor: { sync: { key: 'adaptive' } },
      scales: {
        x: { time: false },
        // A limit far above what the service holds (Envoy's 1000 while idle) would flatten the rest: it runs off the top.
        y: { range: (_u, _min, max) => [0, Math.min(Math.max(workers, max ?? 0), 10 * workers) * 1.1] },
        ms: { range: (_u, _min, max) => [0, Math.max(bound, max ?? 0) * 1.1] },
      },
      axes: [
        { label: 'time since start (s)', stroke: COLORS.axis, grid: { stroke: COLORS.grid } },
        { label: 'requests', stroke: COLORS.axis, grid: { stroke: COLORS.grid }, size: 56 },
        { label: 'latency (ms)', scale: 'ms', side: 1, stroke: COLORS.wait, grid: { show: false }, size: 56 },
      ],
      hooks: { drawClear: [phaseBands(scenario.phases)] },
      series: [
        { label: 'time (s)' },
        { label: 'limit', stroke: COLORS.level, width: 2, ...stepped },
        { label: 'in flight', stroke: COLORS.allowed, fill: COLORS.inFlightFill, width: 1, ...stepped },
        { label: 'p50 latency (ms)', scale: 'ms', stroke: COLORS.limit, width: 1, points: { show: false } },
        { label: 'p99 latency (ms)', scale: 'ms', stroke: COLORS.wait, width: 1.5, points: { show: false } },
        {
          label: 'p99 bound (ms)',
          scale: 'ms',
          stroke: COLORS.rejected,
          dash: [6, 4],
          points: { show: false },
        },
      ],
    },
    [timeMs.map((at) => at / 1000), limit, inFlight, p50Ms, p99Ms, timeMs.map(() => bound)],
    holder,
  );
}
