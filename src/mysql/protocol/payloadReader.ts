/** Reads the fields of one payload in order. */
export class PayloadReader {
  offset = 0;
  constructor(readonly payload: Buffer) {}

  get remaining() {
    return this.payload.length - this.offset;
  }

  private need(n: number) {
    if (this.offset + n > this.payload.length) throw new MalformedPacket('the packet ends early');
  }

  int1() {
    this.need(1);
    return this.payload[this.offset++]!;
  }

  int2() {
    this.need(2);
    const v = this.payload.readUInt16LE(this.offset);
    this.offset += 2;
    return v;
  }

  int3() {
    this.need(3);
    const v = this.payload.readUIntLE(this.offset, 3);
    this.offset += 3;
    return v;
  }

  int4() {
    this.need(4);
    const v = this.payload.readUInt32LE(this.offset);
    this.offset += 4;
    return v;
  }

  int8(): bigint {
    this.need(8);
    const v = this.payload.readBigUInt64LE(this.offset);
    this.offset += 8;
    return v;
  }

  /** A length-encoded integer; null for 0xFB (NULL). */
  lenenc(): number | null {
    const first = this.int1();
    if (first < 0xfb) return first;
    if (first === 0xfb) return null;
    if (first === 0xfc) return this.int2();
    if (first === 0xfd) return this.int3();
    if (first === 0xfe) return Number(this.int8());
    throw new MalformedPacket('invalid length-encoded integer');
  }

  bytes(n: number) {
    this.need(n);
    const v = this.payload.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }

  lenencBytes() {
    return this.bytes(this.lenenc() ?? 0);
  }

  nulBytes() {
    const end = this.payload.indexOf(0, this.offset);
    if (end < 0) throw new MalformedPacket('a string is not terminated');
    const v = this.payload.subarray(this.offset, end);
    this.offset = end + 1;
    return v;
  }

  rest() {
    return this.bytes(this.remaining);
  }
}

export class MalformedPacket extends Error {
  constructor(message: string) {
    super(`Malformed packet: ${message}`);
    this.name = 'MalformedPacket';
  }
}
