// What the request and response codecs share: a message's fields set as they are decoded, and the key-value pair.
import type { Entry } from '../protocol/messages.js';
import { tagOf, type WireReader, WireType } from './wire-reader.js';

const KEY = 1;
const VALUE = 2;

/** A message's plain object while it is decoded, its fields set as they come. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A descriptor's Entry, or a response's HeaderValue: both are a key (1) and a value (2). */
export function decodeKeyValue(reader: WireReader): Entry {
  let key = '';
  let value = '';
  while (reader.more()) {
    const tag = reader.tag();
    if (tag === tagOf(KEY, WireType.LEN)) key = reader.string();
    else if (tag === tagOf(VALUE, WireType.LEN)) value = reader.string();
    else reader.skip(tag);
  }
  return { key, value };
}
