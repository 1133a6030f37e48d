// One descriptor's limit: its `rate_limit` as the reference reads it, its flags, and its `tollgate:` block.
import { configErrorAt } from '../../core/errors.js';
import type { AnyPolicy } from '../../policies/policy.js';
import { Unit } from '../protocol/messages.js';
import {
  asMap,
  atPlace,
  entryOf,
  type Fields,
  optionName,
  placeOfKey,
  readBoolean,
  readCount,
  readList,
  readMap,
  readString,
} from './fields.js';
import { ruleScope, statsKeyOf } from './keys.js';
import { readTollgateBlock, type TollgateBlock } from './tollgate-block.js';
import type { LimitRule } from './types.js';
import { parseUnit, UNIT_NAMES, unitFitting, unitWindow } from './units.js';
import { plainValue } from './yaml-tree.js';

/** Where a descriptor sits: its domain, its path of composite keys from the domain, and the reference's full key. */
export interface RulePath {
  readonly domain: string;
  readonly path: readonly string[];
  readonly fullKey: string;
}

/** What `rate_limit` counts, before the `tollgate:` block has its say. */
interface ReferenceLimit {
  readonly name: string;
  readonly replaces: readonly string[];
  readonly unlimited: boolean;
  readonly requestsPerUnit: number;
  readonly unit: Unit;
}

const MAX_U32 = 4_294_967_295;

/** A rule without `rate_limit`: its `tollgate:` block says what counts. */
const NO_REFERENCE: ReferenceLimit = {
  name: '',
  replaces: [],
  unlimited: false,
  requestsPerUnit: 0,
  unit: Unit.UNKNOWN,
};

/** The descriptor's limit, or undefined when it sets none (a level that only leads to deeper ones). */
export function readRule(descriptor: Fields, where: RulePath): LimitRule | undefined {
  // Read first: the reference refuses a flag of the wrong type on any descriptor, with a limit or without.
  const flags = {
    shadowMode: readBoolean(descriptor, 'shadow_mode'),
    quotaMode: readBoolean(descriptor, 'quota_mode'),
    detailedMetric: readBoolean(descriptor, 'detailed_metric'),
  };
  const rateLimit = readMap(descriptor, 'rate_limit');
  const block = readTollgateBlock(descriptor);
  if (rateLimit === undefined && block?.policies === undefined) {
    if (block === undefined) return undefined;
    throw configErrorAt(
      block.place,
      'tollgate',
      'needs `policies`, or a `rate_limit` beside it, to count anything',
    );
  }
  const reference = rateLimit === undefined ? NO_REFERENCE : readReferenceLimit(rateLimit, block);
  const counting =
    block?.policies === undefined
      ? referenceCounting(reference, rateLimit as Fields)
      : policyCounting(block.policies);
  const metadata = readMap(descriptor, 'metadata');
  return {
    // Shortened as a request's stats key is, so that the two compare equal.
    fullKey: statsKeyOf(where.domain, where.path),
    name: ruleName(reference.name, block, descriptor),
    replaces: reference.replaces,
    unlimited: reference.unlimited,
    ...flags,
    ...counting,
    ...(block?.failMode === undefined ? {} : { failMode: block.failMode }),
    ...(metadata === undefined ? {} : { metadata: plainValue(metadata.map) as Record<string, unknown> }),
    scope: ruleScope(where.domain, where.path, counting.policies),
    source: descriptor.map.place,
  };
}

type Counting = Pick<LimitRule, 'policies' | 'requestsPerUnit' | 'unit' | 'alignedWindowMs'>;

/** The reference's own counting: nothing when unlimited, else its window. */
function referenceCounting(reference: ReferenceLimit, rateLimit: Fields): Counting {
  const { requestsPerUnit, unit } = reference;
  if (reference.unlimited) return { policies: [], requestsPerUnit, unit };
  const window = atPlace(rateLimit.place, rateLimit.path, () => unitWindow(requestsPerUnit, unit));
  return { policies: [window], requestsPerUnit, unit, alignedWindowMs: window.windowMs };
}

/** A `tollgate:` block's policies, reported as the first of them. */
function policyCounting(policies: readonly AnyPolicy[]): Counting {
  const [first] = policies;
  return { policies, requestsPerUnit: first?.limit ?? 0, unit: unitFitting(first?.windowMs ?? 0) };
}

/** `rate_limit`, refused where the reference refuses it, and where it contradicts `tollgate.policies`. */
function readReferenceLimit(rateLimit: Fields, block: TollgateBlock | undefined): ReferenceLimit {
  const unlimited = readBoolean(rateLimit, 'unlimited');
  const unitText = readString(rateLimit, 'unit');
  const unit = parseUnit(unitText);
  const requestsPerUnit = readCount(rateLimit, 'requests_per_unit', MAX_U32);
  if (block?.policies !== undefined) {
    for (const key of ['unit', 'requests_per_unit', 'unlimited']) {
      if (entryOf(rateLimit, key) === undefined) continue;
      throw configErrorAt(
        placeOfKey(rateLimit, key),
        optionName(rateLimit, key),
        'cannot be set beside `tollgate.policies`, which count this limit',
      );
    }
  } else if (unlimited && unit !== undefined) {
    throw configErrorAt(
      placeOfKey(rateLimit, 'unit'),
      optionName(rateLimit, 'unit'),
      'must not be set when `unlimited` is true',
      unitText,
    );
  } else if (!unlimited && unit === undefined) {
    throw configErrorAt(
      placeOfKey(rateLimit, 'unit'),
      optionName(rateLimit, 'unit'),
      `must be one of ${UNIT_NAMES.join(', ')}`,
      unitText,
    );
  }
  const name = readString(rateLimit, 'name');
  return {
    name,
    replaces: readReplaces(rateLimit, name),
    unlimited,
    requestsPerUnit,
    unit: unit ?? Unit.UNKNOWN,
  };
}

/** `replaces: [{ name: other }]`: no empty name, and never this limit's own. */
function readReplaces(rateLimit: Fields, ownName: string): readonly string[] {
  return readList(rateLimit, 'replaces').map((item, index) => {
    const entry = asMap(item, `${optionName(rateLimit, 'replaces')}[${index}]`);
    const name = readString(entry, 'name');
    if (name === '')
      throw configErrorAt(placeOfKey(entry, 'name'), optionName(entry, 'name'), 'must be a non-empty string');
    if (name === ownName) {
      throw configErrorAt(
        placeOfKey(entry, 'name'),
        optionName(entry, 'name'),
        'must not name this limit itself',
        name,
      );
    }
    return name;
  });
}

/** `rate_limit.name` or `tollgate.name`: one name, given once or twice alike. */
function ruleName(referenceName: string, block: TollgateBlock | undefined, descriptor: Fields): string {
  const blockName = block?.name ?? '';
  if (referenceName !== '' && blockName !== '' && referenceName !== blockName) {
    throw configErrorAt(
      placeOfKey(descriptor, 'tollgate'),
      'tollgate.name',
      `must be \`rate_limit.name\` ("${referenceName}") or absent`,
      blockName,
    );
  }
  return referenceName === '' ? blockName : referenceName;
}
