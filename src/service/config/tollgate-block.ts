// A descriptor's `tollgate:` block: Tollgate's own policies for that limit, its fail mode and its name.
//
// For the docs, the keys of a descriptor's block (beside `rate_limit`, or instead of it):
//
//   - key: api_key
//     tollgate:
//       name: per-key            # `current_limit.name` and what `replaces` names; as `rate_limit.name` (never both, unless equal)
//       fail: closed             # when the store cannot be reached: open (allow), closed (deny), memory (count in
//                                # this process alone); absent: the store's own behaviour
//       policies:                # one or more; a request must pass all of them, counted atomically
//         - token_bucket: { capacity: 20, refill_per_second: 5 }
//         - token_bucket: { capacity: 20, refill: { tokens: 100, period: 1m }, name: slow }
//         - fixed_window: { limit: 1000, period: 1d }          # a window per client, opened by its first request
//         - sliding_window: { limit: 10, period: 10s }         # exact: a log of the window's requests
//         - sliding_window_counter: { limit: 10, period: 10s } # approximate: two windows, weighted
//         - aligned_window: { limit: 60, period: 1m }          # windows on the clock, as `rate_limit` counts
//
// `period` is a number of ms or '500ms', '30s', '5m', '1h', '2d'. Each policy may take a `name` (default: its kind,
// such as `fixed-window`); two policies of one descriptor need distinct names. With `policies`, `rate_limit` may
// still give `name` and `replaces` but no `unit`, `requests_per_unit` or `unlimited`, and `current_limit` reports the
// first policy: its limit (a bucket's capacity) per the unit nearest its window (a bucket's time to refill from
// empty): `sliding_window: { limit: 5, period: 30s }` reports 5 per minute.
import { parseDuration } from '../../core/duration.js';
import { configErrorAt } from '../../core/errors.js';
import { alignedWindow } from '../../policies/aligned-window.js';
import { fixedWindow } from '../../policies/fixed-window.js';
import type { AnyPolicy } from '../../policies/policy.js';
import { slidingWindow } from '../../policies/sliding-window.js';
import { slidingWindowCounter } from '../../policies/sliding-window-counter.js';
import { tokenBucket } from '../../policies/token-bucket.js';
import type { WindowOptions } from '../../policies/window-options.js';
import {
  asMap,
  atPlace,
  entryOf,
  type Fields,
  onlyKeys,
  optionName,
  placeOfKey,
  readCount,
  readMap,
  readMaps,
  readNumber,
  readString,
} from './fields.js';
import type { FailMode, SourcePlace } from './types.js';

export interface TollgateBlock {
  /** '' when the block names nothing. */
  readonly name: string;
  readonly failMode?: FailMode;
  /** Absent when the block sets none: the `rate_limit` counts. */
  readonly policies?: readonly AnyPolicy[];
  readonly place: SourcePlace;
}

const FAIL_MODES: readonly FailMode[] = ['open', 'closed', 'memory'];
/** `current_limit.requests_per_unit` is a uint32, so no limit may be larger. */
const MAX_COUNT = 4_294_967_295;

type WindowFactory = (options: WindowOptions) => AnyPolicy;
const WINDOWS: Readonly<Record<string, WindowFactory>> = {
  fixed_window: fixedWindow,
  sliding_window: slidingWindow,
  sliding_window_counter: slidingWindowCounter,
  aligned_window: alignedWindow,
};
const KINDS = ['token_bucket', ...Object.keys(WINDOWS)];

/** The `tollgate:` block of a descriptor, or undefined when it has none. */
export function readTollgateBlock(descriptor: Fields): TollgateBlock | undefined {
  const block = readMap(descriptor, 'tollgate');
  if (block === undefined) return undefined;
  onlyKeys(block, ['name', 'fail', 'policies']);
  if (block.map.entries.length === 0) {
    throw configErrorAt(block.place, block.path, 'must set `policies`, `fail` or `name`');
  }
  const failMode = readFailMode(block);
  const policies = entryOf(block, 'policies') === undefined ? undefined : readPolicies(block);
  return {
    name: readString(block, 'name'),
    ...(failMode === undefined ? {} : { failMode }),
    ...(policies === undefined ? {} : { policies }),
    place: block.place,
  };
}

function readFailMode(block: Fields): FailMode | undefined {
  const text = readString(block, 'fail');
  if (text === '') return undefined;
  if (FAIL_MODES.includes(text as FailMode)) return text as FailMode;
  throw configErrorAt(
    placeOfKey(block, 'fail'),
    optionName(block, 'fail'),
    `must be one of ${FAIL_MODES.join(', ')}`,
    text,
  );
}

function readPolicies(block: Fields): readonly AnyPolicy[] {
  const read = readMaps(block, 'policies', 'policy', (item) => ({ policy: readPolicy(item), item }));
  read.forEach(({ policy, item }, index) => {
    if (read.findIndex((other) => other.policy.name === policy.name) === index) return;
    throw configErrorAt(
      item.place,
      item.path,
      `repeats the policy name "${policy.name}": give each policy a distinct \`name\``,
    );
  });
  return read.map(({ policy }) => policy);
}

/** `{ <kind>: { ...options } }`: exactly one kind per list item. */
function readPolicy(item: Fields): AnyPolicy {
  onlyKeys(item, KINDS);
  const [entry, extra] = item.map.entries;
  if (entry === undefined || extra !== undefined) {
    throw configErrorAt(item.place, item.path, `must hold exactly one of ${KINDS.join(', ')}`);
  }
  const kind = entry.key as string;
  const options = asMap(entry.value, optionName(item, kind), entry.place);
  return kind === 'token_bucket'
    ? readTokenBucket(options)
    : readWindow(options, WINDOWS[kind] as WindowFactory);
}

function readWindow(options: Fields, factory: WindowFactory): AnyPolicy {
  onlyKeys(options, ['limit', 'period', 'name']);
  const limit = readCount(options, 'limit', MAX_COUNT, -1);
  if (limit < 0) throw configErrorAt(options.place, optionName(options, 'limit'), 'is required');
  const windowMs = readPeriod(options, 'period');
  return atPlace(options.place, options.path, () => factory({ limit, windowMs, ...nameOption(options) }));
}

function readTokenBucket(options: Fields): AnyPolicy {
  onlyKeys(options, ['capacity', 'refill_per_second', 'refill', 'name']);
  const capacity = readCount(options, 'capacity', MAX_COUNT, -1);
  if (capacity < 0) throw configErrorAt(options.place, optionName(options, 'capacity'), 'is required');
  const perSecond = readNumber(options, 'refill_per_second');
  const refill = readMap(options, 'refill');
  if ((perSecond === undefined) === (refill === undefined)) {
    throw configErrorAt(
      options.place,
      options.path,
      'must set exactly one of `refill_per_second` and `refill`',
    );
  }
  const refillPerSecond = perSecond ?? readRefill(refill as Fields);
  return atPlace(options.place, options.path, () =>
    tokenBucket({ capacity, refillPerSecond, ...nameOption(options) }),
  );
}

/** `refill: { tokens, period }` as tokens per second. */
function readRefill(refill: Fields): number {
  onlyKeys(refill, ['tokens', 'period']);
  const tokens = readNumber(refill, 'tokens');
  if (tokens === undefined) throw configErrorAt(refill.place, optionName(refill, 'tokens'), 'is required');
  return (tokens * 1_000) / readPeriod(refill, 'period');
}

function readPeriod(options: Fields, key: string): number {
  const entry = entryOf(options, key);
  const option = optionName(options, key);
  if (entry === undefined) throw configErrorAt(options.place, option, 'is required');
  const value = entry.value.kind === 'scalar' ? entry.value.value : undefined;
  return atPlace(entry.place, '', () => parseDuration(option, value));
}

function nameOption(options: Fields): { name?: string } {
  const name = readString(options, 'name');
  return name === '' ? {} : { name };
}
