// Loads the service's configuration: envoyproxy/ratelimit's YAML files unchanged, plus Tollgate's own blocks.
import { configErrorAt } from '../../core/errors.js';
import type { RateLimitDescriptor } from '../protocol/messages.js';
import { addDescriptors, type DescriptorNode, domainRoot } from './descriptor-tree.js';
import { type Fields, fieldsOf, placeOfKey, readList, readString } from './fields.js';
import { readFileBlock } from './http-rules.js';
import { matchDescriptor } from './matcher.js';
import { overrideMatcher } from './override.js';
import { checkReferenceKeys } from './reference-keys.js';
import type { HttpCheckRules, LimitMatch, ServiceConfig, SourcePlace } from './types.js';
import { parseYamlTree } from './yaml-tree.js';

/** One configuration file: `path` names it in every message. */
export interface ConfigFile {
  readonly path: string;
  readonly text: string;
}

export interface ServiceConfigOptions {
  /**
   * Files of one domain add their descriptors to it, as the reference's `MERGE_DOMAIN_CONFIG` does; a descriptor
   * repeated across them is still refused. Default false: a domain in two files is refused.
   */
  readonly mergeDomains?: boolean;
}

interface Loaded {
  readonly roots: Map<string, DescriptorNode>;
  /** The file each domain was first loaded from, for messages. */
  readonly origins: Map<string, string>;
  readonly httpChecks: Map<string, HttpCheckRules>;
  readonly rawBodies: Map<string, Uint8Array>;
}

/**
 * The configuration of `files`, in order, refused as a whole at the first fault, with its file, line and key
 * (ERR_TOLLGATE_CONFIG): what the reference refuses, and what is wrong in Tollgate's own blocks.
 */
export function loadServiceConfig(
  files: readonly ConfigFile[],
  options: ServiceConfigOptions = {},
): ServiceConfig {
  const loaded: Loaded = {
    roots: new Map(),
    origins: new Map(),
    httpChecks: new Map(),
    rawBodies: new Map(),
  };
  for (const file of files) loadFile(loaded, file, options.mergeDomains === true);
  const override = overrideMatcher();
  return {
    files: files.map((file) => file.path),
    domains: [...loaded.roots.keys()],
    findLimit(domain: string, descriptor: RateLimitDescriptor): LimitMatch | undefined {
      const root = loaded.roots.get(domain);
      if (root === undefined) return undefined;
      if (descriptor.limit !== undefined) return override(domain, descriptor, descriptor.limit);
      return matchDescriptor(domain, root, descriptor);
    },
    httpChecks: loaded.httpChecks,
    rawBodies: loaded.rawBodies,
  };
}

function loadFile(loaded: Loaded, file: ConfigFile, merge: boolean): void {
  const tree = parseYamlTree(file.path, file.text);
  if (tree.kind !== 'map') {
    throw configErrorAt(tree.place, undefined, 'must be a map of `domain` and `descriptors`');
  }
  checkReferenceKeys(tree);
  const fields = fieldsOf(tree);
  const domain = readString(fields, 'domain');
  if (domain === '')
    throw configErrorAt(placeOfKey(fields, 'domain'), 'domain', 'must be a non-empty string');
  const descriptors = readList(fields, 'descriptors');
  const root = domainRootFor(loaded, fields, domain, merge);
  addDescriptors(root, descriptors, domain, []);
  addFileBlock(loaded, fields, domain);
}

/** The domain's root: a new one, or with `merge` the one an earlier file loaded. */
function domainRootFor(loaded: Loaded, fields: Fields, domain: string, merge: boolean): DescriptorNode {
  const known = loaded.roots.get(domain);
  if (known !== undefined && !merge) {
    const requirement = `"${domain}" is already loaded from ${loaded.origins.get(domain)} (a domain is one file, unless \`mergeDomains\` is set)`;
    throw configErrorAt(placeOfKey(fields, 'domain'), 'domain', requirement);
  }
  if (known !== undefined) return known;
  const root = domainRoot(fields.map.place);
  loaded.roots.set(domain, root);
  loaded.origins.set(domain, fields.map.place.file);
  return root;
}

function addFileBlock(loaded: Loaded, fields: Fields, domain: string): void {
  const { httpCheck, rawBody } = readFileBlock(fields, domain);
  const place = placeOfKey(fields, 'tollgate');
  if (httpCheck !== undefined) setOnce(loaded.httpChecks, domain, httpCheck, place, 'tollgate.http_check');
  if (rawBody !== undefined) setOnce(loaded.rawBodies, domain, rawBody, place, 'tollgate.raw_body');
}

/** A domain's file-level setting, which one file of a merged domain may give, not two. */
function setOnce<T>(
  settings: Map<string, T>,
  domain: string,
  value: T,
  place: SourcePlace,
  key: string,
): void {
  if (settings.has(domain))
    throw configErrorAt(place, key, `is already set for domain "${domain}" by another file`);
  settings.set(domain, value);
}
