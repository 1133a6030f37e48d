// The protobuf wire reader and writer on their own: varints at every size, embedded lengths, and every wire type
// skipped, against hand-built bytes and BigInt arithmetic.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { tagOf, WireReader, WireType } from '../../../src/service/grpc/wire-reader.js';
import { WireWriter } from '../../../src/service/grpc/wire-writer.js';

/** The varint of a BigInt, as protobuf writes it. */
function varint(value: bigint): number[] {
  const bytes: number[] = [];
  let v = value;
  while (v >= 0x80n) {
    bytes.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  bytes.push(Number(v));
  return bytes;
}

const reader = (bytes: number[]) => new WireReader(Uint8Array.from(bytes));

function refuses(read: () => unknown, pattern: RegExp): void {
  assert.throws(read, (error: Error & { code?: string }) => {
    assert.equal(error.code, 'ERR_TOLLGATE_ARGUMENT');
    assert.match(error.message, pattern);
    return true;
  });
}

describe('WireReader varints', () => {
  it('reads uint64 exactly up to Number.MAX_SAFE_INTEGER and refuses above it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: BigInt(Number.MAX_SAFE_INTEGER) }), (value) => {
        const r = reader(varint(value));
        assert.equal(r.uint64(), Number(value));
        assert.equal(r.more(), false);
      }),
    );
    refuses(() => reader(varint(2n ** 53n)).uint64(), /above 9007199254740991/);
    refuses(() => reader(varint(2n ** 64n - 1n)).uint64(), /above/);
  });

  it('keeps a uint32 field the low 32 bits of any 64-bit varint, as protobuf does', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (value) => {
        const r = reader(varint(value));
        assert.equal(r.uint32(), Number(value & 0xffffffffn));
        assert.equal(r.more(), false);
      }),
    );
    // A negative int32 enum is sent as ten bytes.
    assert.equal(reader(varint(2n ** 64n - 1n)).uint32(), 0xffffffff);
  });

  it('refuses a varint cut short or longer than ten bytes', () => {
    refuses(() => reader([0x80]).uint32(), /cut short/);
    refuses(() => reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).uint32(), /cut short/);
    refuses(() => reader([0x80, 0x80]).uint64(), /cut short/);
    const eleven = [...Array(10).fill(0x80), 0x01];
    refuses(() => reader(eleven).uint32(), /longer than ten bytes/);
    refuses(() => reader(eleven).uint64(), /longer than ten bytes/);
  });

  it('refuses an enum beyond its known values', () => {
    assert.equal(reader([7]).enumValue(7, 'a unit'), 7);
    refuses(() => reader([8]).enumValue(7, 'a unit'), /a unit 8 is not one of 0-7/);
  });
});

describe('WireReader tags and lengths', () => {
  it('refuses field number 0 and wire types 6 and 7', () => {
    refuses(() => reader([0x00]).tag(), /field number 0/);
    refuses(() => reader([0x0e]).tag(), /wire type 6/);
    refuses(() => reader([0x0f]).tag(), /wire type 7/);
    assert.equal(reader(varint(BigInt(tagOf(2 ** 29 - 1, WireType.LEN)))).tag() >>> 3, 2 ** 29 - 1);
  });

  it('refuses a length beyond the bytes left, and a string that is not UTF-8', () => {
    refuses(() => reader([0x05, 0x61, 0x62]).string(), /cut short/);
    refuses(() => reader([0x02, 0xc3, 0x28]).string(), /not UTF-8/);
    assert.equal(reader([0x02, 0xc3, 0xa9]).string(), 'é');
    assert.equal(reader([0x00]).string(), '');
  });

  it('bounds an embedded message by its length, then reads on past it', () => {
    const r = reader([0x02, 0x08, 0x01, 0x10, 0x02]);
    const inner = r.message((m, arg: string | undefined) => {
      assert.equal(arg, 'given');
      assert.equal(m.tag(), tagOf(1, WireType.VARINT));
      const value = m.uint32();
      assert.equal(m.more(), false);
      return value;
    }, 'given');
    assert.equal(inner, 1);
    assert.equal(r.tag(), tagOf(2, WireType.VARINT));
    assert.equal(r.uint32(), 2);
  });

  it('refuses a field that runs past its embedded message, though not past the input', () => {
    // A message of 2 bytes holding a string of 3.
    const r = reader([0x02, 0x0a, 0x03, 0x61, 0x62, 0x63]);
    const readString = (m: WireReader) => {
      m.tag();
      return m.string();
    };
    refuses(() => r.message(readString), /cut short/);
  });

  it('copies bytes fields, so that they outlive the buffer', () => {
    const buffer = Uint8Array.from([0x02, 0x01, 0x02]);
    const bytes = new WireReader(buffer).bytes();
    buffer.fill(0);
    assert.deepEqual([...bytes], [1, 2]);
  });
});

describe('WireReader.skip', () => {
  /** A message: an unknown field of `bytes`, then field 1 = 42, which must be read after skipping. */
  function skipsThenReads(unknown: number[]): void {
    const r = reader([...unknown, 0x08, 42]);
    r.skip(r.tag());
    assert.equal(r.tag(), tagOf(1, WireType.VARINT));
    assert.equal(r.uint32(), 42);
  }

  it('skips every wire type', () => {
    skipsThenReads([0x10, ...varint(2n ** 63n)]);
    skipsThenReads([0x11, 1, 2, 3, 4, 5, 6, 7, 8]);
    skipsThenReads([0x12, 0x03, 0x61, 0x62, 0x63]);
    skipsThenReads([0x15, 1, 2, 3, 4]);
    // Group 2 holding a varint, a string and a nested group 3.
    skipsThenReads([0x13, 0x08, 0x05, 0x12, 0x01, 0x61, 0x1b, 0x08, 0x01, 0x1c, 0x14]);
  });

  it('refuses each wire type cut short', () => {
    for (const bytes of [
      [0x10, 0x80],
      [0x11, 1, 2, 3],
      [0x12, 0x05, 0x61],
      [0x15, 1, 2],
      [0x13, 0x08, 0x01],
    ]) {
      const r = reader(bytes);
      refuses(() => r.skip(r.tag()), /cut short/);
    }
  });

  it('refuses an end of group with none open, or not the open one', () => {
    const lone = reader([0x14]);
    refuses(() => lone.skip(lone.tag()), /end of group with none open/);
    const crossed = reader([0x13, 0x1c]);
    refuses(() => crossed.skip(crossed.tag()), /end of group 3 inside group 2/);
  });

  it('refuses groups nested past its depth limit rather than recursing without end', () => {
    const deep = [...Array(100).fill(0x13)];
    const r = reader(deep);
    refuses(() => r.skip(r.tag()), /nested deeper than 64/);
  });
});

describe('WireWriter', () => {
  it('writes varints protobuf reads back, up to Number.MAX_SAFE_INTEGER', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (value) => {
        const writer = new WireWriter();
        writer.uint(3, value);
        assert.deepEqual([...writer.finish()], [0x18, ...varint(BigInt(value))]);
      }),
    );
  });

  it('leaves out scalars at their default, as proto3 does', () => {
    const writer = new WireWriter();
    writer.uint(1, 0);
    writer.string(2, '');
    writer.bytes(3, new Uint8Array());
    assert.equal(writer.finish().length, 0);
  });

  it('writes an embedded message of any length in place, nested, and an empty one still', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { maxLength: 60 }), (texts) => {
        const writer = new WireWriter();
        const outer = writer.fork(1);
        for (const text of texts) {
          const inner = writer.fork(2);
          writer.string(1, text);
          writer.join(inner);
        }
        writer.join(outer);
        const r = new WireReader(writer.finish());
        assert.equal(r.tag(), tagOf(1, WireType.LEN));
        const read: string[] = [];
        r.message((message) => {
          while (message.more()) {
            assert.equal(message.tag(), tagOf(2, WireType.LEN));
            // An empty string is not written: its message is empty.
            read.push(message.message((inner) => (inner.more() && inner.tag() ? inner.string() : '')));
          }
        });
        assert.equal(r.more(), false);
        assert.deepEqual(
          read,
          texts.map((t) => Buffer.from(t).toString()),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('writes bytes fields and grows past its first buffer', () => {
    const big = Uint8Array.from({ length: 70_000 }, (_, i) => i & 0xff);
    const writer = new WireWriter();
    writer.bytes(5, big);
    writer.uint(6, 1);
    const r = new WireReader(writer.finish());
    assert.equal(r.tag(), tagOf(5, WireType.LEN));
    assert.deepEqual(r.bytes(), big);
    assert.equal(r.tag(), tagOf(6, WireType.VARINT));
  });
});
