// Writes the protobuf wire format into one growing buffer, embedded messages in place (no sizing pass).
import { WireType } from './wire-reader.js';

/** Enough for a typical response without growing. */
const INITIAL_BYTES = 256;

/**
 * Fields are written in the order the caller gives. Scalars at their default (0, '', no bytes) are not written, as
 * proto3 encodes its fields without presence; scalar values must be non-negative integers (every field the service
 * sends is unsigned or a non-negative enum). An embedded message is opened with `fork` and closed with `join`, which
 * writes its length in front of it, so nothing is encoded twice; an empty one is still written, its presence its
 * meaning.
 */
export class WireWriter {
  private buf = Buffer.allocUnsafe(INITIAL_BYTES);
  private pos = 0;

  /** A varint field, up to Number.MAX_SAFE_INTEGER (int64, uint64, uint32 and enum fields alike). */
  uint(field: number, value: number): void {
    if (value === 0) return;
    this.varint((field << 3) | WireType.VARINT);
    this.varint(value);
  }

  /** A string field. */
  string(field: number, value: string): void {
    if (value === '') return;
    const mark = this.fork(field);
    this.reserve(value.length * 3);
    this.pos += this.buf.write(value, this.pos);
    this.join(mark);
  }

  /** A bytes field. */
  bytes(field: number, value: Uint8Array): void {
    if (value.length === 0) return;
    this.varint((field << 3) | WireType.LEN);
    this.varint(value.length);
    this.reserve(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** Opens an embedded message (or any length-delimited field): its tag, then room for a one-byte length. */
  fork(field: number): number {
    this.varint((field << 3) | WireType.LEN);
    this.reserve(1);
    return this.pos++;
  }

  /** Closes what `fork` opened at `mark`, moving its bytes along when its length needs more than one byte. */
  join(mark: number): void {
    const length = this.pos - mark - 1;
    if (length < 0x80) {
      this.buf[mark] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.reserve(extra);
    this.buf.copyWithin(mark + 1 + extra, mark + 1, this.pos);
    const end = this.pos + extra;
    this.pos = mark;
    this.varint(length);
    this.pos = end;
  }

  /** The bytes written: a view of the writer's buffer, which the writer must not be used after. */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private varint(value: number): void {
    this.reserve(10);
    const buf = this.buf;
    let v = value;
    // Beyond 32 bits, bitwise operators would truncate: divide instead.
    while (v > 0xffffffff) {
      buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    while (v > 0x7f) {
      buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[this.pos++] = v;
  }

  private reserve(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

/** The bytes a varint of `value` takes. */
function varintSize(value: number): number {
  let size = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) size++;
  return size;
}
