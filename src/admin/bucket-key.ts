// Reads a bucket key back into scope and identifier, for admin listings (the inverse of key.ts's bucketKeys).
export interface ParsedBucketKey {
  readonly scope: string;
  /** As stored: plain identifiers as given, others as `~` + hash (the raw identity is not recoverable). */
  readonly identifier: string;
}

/**
 * `scope|id` (one policy) or `{scope|id}:policy` (several). Scopes never contain `|`, `{` or `}`, and stored
 * identifiers never contain braces, so the first `|` and the first `}` are the separators. Anything else (a
 * foreign key under the same prefix) is undefined.
 */
export function parseBucketKey(key: string): ParsedBucketKey | undefined {
  const close = key.startsWith('{') ? key.indexOf('}') : 0;
  if (close < 0) return undefined;
  const base = close === 0 ? key : key.slice(1, close);
  const bar = base.indexOf('|');
  if (bar <= 0 || bar === base.length - 1) return undefined;
  return { scope: base.slice(0, bar), identifier: base.slice(bar + 1) };
}
