// A file's own `tollgate:` block: the body a denial answers with, and how the HTTP check makes descriptors.
//
// For the docs, the keys of a file's block (at the top, beside `domain` and `descriptors`):
//
//   domain: edge
//   descriptors: [...]
//   tollgate:
//     raw_body: "Too many requests\n"   # the body Envoy answers a limited request with (RateLimitResponse.raw_body)
//     http_check:                       # how `tollgate serve` answers an HTTP check (nginx auth_request, Traefik
//       deny_status: 429                #   forwardAuth, Envoy ext_authz): 429 (default) or 403 (nginx)
//       descriptors:                    # each builds one descriptor, in order; as Envoy's rate limit actions
//         - entries:
//             - remote_address: {}      # key `remote_address`: the client's address, the rightmost
//                                       #   X-Forwarded-For entry past `trusted_hops` (default 0), else X-Real-IP,
//                                       #   else the peer; `key` renames the entry
//             - request_header: { header: x-forwarded-uri, key: path }
//                                       # a header's value; the whole descriptor is left out when the header is
//                                       #   absent, unless `skip_if_absent: true` leaves out just this entry
//             - generic_key: { value: api }   # a fixed entry, key `generic_key` unless `key` is given
//
// The first file loaded with an `http_check` gives the HTTP check's default domain.
import { configErrorAt } from '../../core/errors.js';
import {
  asMap,
  entryOf,
  type Fields,
  fieldsOf,
  onlyKeys,
  optionName,
  placeOfKey,
  readBoolean,
  readCount,
  readMap,
  readMaps,
  readString,
  requireString,
} from './fields.js';
import type { HttpCheckRules, HttpDescriptorRule, HttpEntryRule } from './types.js';

export interface FileBlock {
  readonly httpCheck?: HttpCheckRules;
  readonly rawBody?: Uint8Array;
}

const ACTIONS = ['remote_address', 'request_header', 'generic_key'] as const;
const DENY_STATUSES = [429, 403] as const;
/** An HTTP header name: a token (RFC 9110). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** More proxies than this in front of one service is a mistake, not a topology. */
const MAX_HOPS = 64;

/** The file's `tollgate:` block for `domain`; empty when it has none. */
export function readFileBlock(file: Fields, domain: string): FileBlock {
  const block = readMap(file, 'tollgate');
  if (block === undefined) return {};
  onlyKeys(block, ['raw_body', 'http_check']);
  const check = readMap(block, 'http_check');
  const rawBody = readString(block, 'raw_body');
  return {
    ...(check === undefined ? {} : { httpCheck: readHttpCheck(check, domain) }),
    ...(entryOf(block, 'raw_body') === undefined ? {} : { rawBody: new TextEncoder().encode(rawBody) }),
  };
}

function readHttpCheck(check: Fields, domain: string): HttpCheckRules {
  onlyKeys(check, ['deny_status', 'descriptors']);
  const denyStatus = readCount(check, 'deny_status', 999, 429);
  if (!(DENY_STATUSES as readonly number[]).includes(denyStatus)) {
    throw configErrorAt(
      placeOfKey(check, 'deny_status'),
      optionName(check, 'deny_status'),
      'must be 429 or 403',
      denyStatus,
    );
  }
  const descriptors = readMaps(check, 'descriptors', 'descriptor', readDescriptor);
  return { domain, descriptors, denyStatus: denyStatus as 429 | 403, source: check.place };
}

function readDescriptor(descriptor: Fields): HttpDescriptorRule {
  onlyKeys(descriptor, ['entries']);
  return { entries: readMaps(descriptor, 'entries', 'entry', readEntry) };
}

/** `{ <action>: { ...options } }`: exactly one action per entry. */
function readEntry(item: Fields): HttpEntryRule {
  onlyKeys(item, ACTIONS);
  const [entry, extra] = item.map.entries;
  if (entry === undefined || extra !== undefined) {
    throw configErrorAt(item.place, item.path, `must hold exactly one of ${ACTIONS.join(', ')}`);
  }
  const action = entry.key as (typeof ACTIONS)[number];
  const empty = entry.value.kind === 'scalar' && entry.value.value === null;
  const path = optionName(item, action);
  const options = empty
    ? fieldsOf({ ...item.map, entries: [] }, path, entry.place)
    : asMap(entry.value, path, entry.place);
  if (action === 'remote_address') {
    onlyKeys(options, ['key', 'trusted_hops']);
    return {
      type: action,
      key: readString(options, 'key') || action,
      trustedHops: readCount(options, 'trusted_hops', MAX_HOPS),
    };
  }
  if (action === 'generic_key') {
    onlyKeys(options, ['key', 'value']);
    return {
      type: action,
      key: readString(options, 'key') || action,
      value: requireString(options, 'value'),
    };
  }
  onlyKeys(options, ['header', 'key', 'skip_if_absent']);
  return {
    type: action,
    key: requireString(options, 'key'),
    header: readHeader(options),
    skipIfAbsent: readSkip(options),
  };
}

function readHeader(options: Fields): string {
  const header = requireString(options, 'header');
  if (!HEADER_NAME.test(header)) {
    throw configErrorAt(
      placeOfKey(options, 'header'),
      optionName(options, 'header'),
      'must be an HTTP header name',
      header,
    );
  }
  return header.toLowerCase();
}

/** As Envoy's `skip_if_absent`, false unless set: a missing header leaves out its whole descriptor, else its entry. */
function readSkip(options: Fields): boolean {
  return readBoolean(options, 'skip_if_absent');
}
