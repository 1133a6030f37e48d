// Reads the protobuf wire format: tags, varints, length-delimited fields, skipping what the reader does not know.
import { isUtf8 } from 'node:buffer';
import { argumentError } from '../../core/errors.js';

/** The wire types a tag's low three bits name. */
export const WireType = { VARINT: 0, FIXED64: 1, LEN: 2, START_GROUP: 3, END_GROUP: 4, FIXED32: 5 } as const;

/** The tag a field of number `field` and wire type `wireType` starts with, to compare `WireReader.tag()` against. */
export function tagOf(field: number, wireType: number): number {
  return ((field << 3) | wireType) >>> 0;
}

/**
 * Buffer's native UTF-8 slice, undocumented but what protobufjs reads strings with too: it skips `toString`'s
 * argument checks, which cost as much as decoding a short string. `toString` where it is missing.
 */
const utf8Slice: (buf: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as Partial<NativeSlices>).utf8Slice === 'function'
    ? (buf, start, end) => (buf as Buffer & NativeSlices).utf8Slice(start, end)
    : (buf, start, end) => buf.toString('utf8', start, end);

interface NativeSlices {
  utf8Slice(start: number, end: number): string;
}

/** Groups nest; a hostile message nesting them deeper than this is refused rather than followed. */
const MAX_GROUP_DEPTH = 64;

/**
 * A cursor over one message's bytes. Every read checks its bytes are there: truncated or malformed
 * input throws an ERR_TOLLGATE_ARGUMENT error, which the server answers INVALID_ARGUMENT.
 */
export class WireReader {
  private pos = 0;
  /** Where the message being read ends: the whole input's end, or an embedded message's while it is read. */
  private end: number;
  private readonly buf: Buffer;

  constructor(bytes: Uint8Array) {
    // A view, not a copy: Buffer's native UTF-8 decoding is what makes strings cheap.
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.end = bytes.length;
  }

  /** Whether a field is left to read. */
  more(): boolean {
    return this.pos < this.end;
  }

  /** The next field's tag (`field << 3 | wireType`), refusing field number 0 and the unused wire types 6 and 7. */
  tag(): number {
    const tag = this.uint32();
    if (tag >>> 3 === 0) throw malformed(`field number 0 at byte ${this.pos}`);
    if ((tag & 7) > WireType.FIXED32) throw malformed(`wire type ${tag & 7} at byte ${this.pos}`);
    return tag;
  }

  /** A varint's low 32 bits, unsigned: what a uint32 or enum field keeps of a longer value, as protobuf does. */
  uint32(): number {
    const { buf, end } = this;
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= end) throw truncated();
      const byte = buf[this.pos++] as number;
      value |= (byte & 0x7f) << shift;
      if (byte < 0x80) return value >>> 0;
    }
    // Bits 35 to 63: not kept, but the varint must still end within its ten bytes.
    for (let i = 5; i < 10; i++) {
      if (this.pos >= end) throw truncated();
      if ((buf[this.pos++] as number) < 0x80) return value >>> 0;
    }
    throw malformed('a varint longer than ten bytes');
  }

  /**
   * An enum field, refused beyond `max`: proto3 would keep an unknown value, but the service could not act on one
   * (an override in a unit it does not know), and Envoy sends only the values it declares.
   */
  enumValue(max: number, name: string): number {
    const value = this.uint32();
    if (value > max) throw malformed(`${name} ${value} is not one of 0-${max}`);
    return value;
  }

  /** A uint64 varint, refused above Number.MAX_SAFE_INTEGER rather than rounded. */
  uint64(): number {
    const { buf, end } = this;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw truncated();
      const byte = buf[this.pos++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (value > Number.MAX_SAFE_INTEGER) throw malformed(`a uint64 above ${Number.MAX_SAFE_INTEGER}`);
        return value;
      }
      scale *= 128;
    }
    throw malformed('a varint longer than ten bytes');
  }

  /**
   * An embedded message, read by `decode` (given `arg`) from this same reader with its reads bounded by the
   * message's end: no reader or view is made per message, so decoding allocates little more than what it returns.
   */
  message<T, A = undefined>(decode: (reader: WireReader, arg: A | undefined) => T, arg?: A): T {
    const length = this.length();
    const outer = this.end;
    this.end = this.pos + length;
    const value = decode(this, arg);
    this.pos = this.end;
    this.end = outer;
    return value;
  }

  /**
   * A string field, refused when it is not UTF-8 (as proto3 requires), since a replaced byte would merge keys. Only
   * a string holding U+FFFD, the replacement character, can hide invalid bytes, so only such a one is checked.
   */
  string(): string {
    const length = this.length();
    const start = this.pos;
    this.pos += length;
    if (length === 0) return '';
    const text = utf8Slice(this.buf, start, this.pos);
    if (text.indexOf('\uFFFD') !== -1 && !isUtf8(this.buf.subarray(start, this.pos)))
      throw malformed(`a string field that is not UTF-8 at byte ${start}`);
    return text;
  }

  /** A bytes field, copied so that it outlives the message's buffer. */
  bytes(): Uint8Array {
    const length = this.length();
    const start = this.pos;
    this.pos += length;
    return new Uint8Array(this.buf.subarray(start, this.pos));
  }

  /** Moves past the value of a field this reader does not know, whatever its wire type. */
  skip(tag: number, depth = 0): void {
    switch (tag & 7) {
      case WireType.VARINT:
        this.uint32();
        return;
      case WireType.FIXED64:
        this.advance(8);
        return;
      case WireType.LEN:
        this.advance(this.length());
        return;
      case WireType.START_GROUP:
        this.skipGroup(tag >>> 3, depth);
        return;
      case WireType.FIXED32:
        this.advance(4);
        return;
      default:
        throw malformed(`an end of group with none open at byte ${this.pos}`);
    }
  }

  private skipGroup(field: number, depth: number): void {
    if (depth >= MAX_GROUP_DEPTH) throw malformed(`groups nested deeper than ${MAX_GROUP_DEPTH}`);
    for (;;) {
      if (!this.more()) throw truncated();
      const tag = this.tag();
      if ((tag & 7) !== WireType.END_GROUP) this.skip(tag, depth + 1);
      else if (tag >>> 3 === field) return;
      else throw malformed(`an end of group ${tag >>> 3} inside group ${field}`);
    }
  }

  /** A length-delimited field's length, checked against the bytes left. */
  private length(): number {
    const length = this.uint32();
    if (length > this.end - this.pos) throw truncated();
    return length;
  }

  private advance(bytes: number): void {
    if (bytes > this.end - this.pos) throw truncated();
    this.pos += bytes;
  }
}

function truncated(): Error {
  return malformed('a message cut short');
}

function malformed(what: string): Error {
  return argumentError(`the protobuf message is malformed: ${what}`);
}
