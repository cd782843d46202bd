import { MAX_PACKET_PAYLOAD } from './constants';

/** One packet as the client sent it: its sequence number and payload (continuations joined). */
export type Packet = { sequence: number; payload: Buffer };

/**
 * Cuts the bytes a client sends into packets (3-byte length, 1-byte sequence, payload). A payload
 * of exactly 2^24 − 1 bytes continues in the next packet. Parsing is lazy: bytes after the packet
 * a caller takes stay raw, so a TLS handshake that follows the SSL request in the same TCP read is
 * handed whole to the TLS layer.
 */
export class PacketReader {
  private buffer: Buffer = Buffer.alloc(0);
  private start = 0;
  private end = 0;

  /** `maxPayload`: the largest payload accepted (continuations joined); more is PacketTooLarge. */
  constructor(private readonly maxPayload = Number.POSITIVE_INFINITY) {}

  /**
   * Appends received bytes. Bytes already handed out in a packet are never written over: the
   * buffer grows into a new one (unread bytes copied once, capacity doubling), so a packet
   * arriving in many reads costs linear time.
   */
  feed(chunk: Buffer) {
    if (this.start === this.end) {
      this.buffer = chunk;
      this.start = 0;
      this.end = chunk.length;
      return;
    }
    if (this.end + chunk.length > this.buffer.length) {
      const unread = this.end - this.start;
      const next = Buffer.allocUnsafe(Math.max(unread + chunk.length, unread * 2, 64 * 1024));
      this.buffer.copy(next, 0, this.start, this.end);
      this.buffer = next;
      this.start = 0;
      this.end = unread;
    }
    chunk.copy(this.buffer, this.end);
    this.end += chunk.length;
  }

  /** The next whole packet, or undefined until more bytes arrive. */
  read(): Packet | undefined {
    let at = this.start;
    const parts: Buffer[] = [];
    let sequence = 0;
    let total = 0;
    for (;;) {
      if (this.end - at < 4) return undefined;
      const length = this.buffer.readUIntLE(at, 3);
      sequence = this.buffer[at + 3]!;
      // Checked from the header, before the payload is waited for: memory stays bounded.
      total += length;
      if (total > this.maxPayload) throw new PacketTooLarge(this.maxPayload);
      if (this.end - at - 4 < length) return undefined;
      parts.push(this.buffer.subarray(at + 4, at + 4 + length));
      at += 4 + length;
      if (length < MAX_PACKET_PAYLOAD) break;
    }
    this.start = at;
    return { sequence, payload: parts.length === 1 ? parts[0]! : Buffer.concat(parts) };
  }

  /** Bytes received and not yet cut into packets (handed over when the stream changes hands). */
  takeRest(): Buffer {
    const rest = this.buffer.subarray(this.start, this.end);
    this.buffer = Buffer.alloc(0);
    this.start = 0;
    this.end = 0;
    return rest;
  }
}

/**
 * Builds outgoing packets into one growing buffer, so a whole result (or a large part of one) is
 * a single socket write. `begin`/`end` frame one packet; the sequence number runs on by itself.
 */
export class PacketWriter {
  private buf: Buffer;
  private pos = 0;
  private start = -1;
  sequence = 0;

  constructor(private readonly initial = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  get size() {
    return this.pos;
  }

  private ensure(n: number) {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  begin() {
    this.ensure(4);
    this.start = this.pos;
    this.pos += 4;
    return this;
  }

  end() {
    const length = this.pos - this.start - 4;
    if (length < MAX_PACKET_PAYLOAD) {
      this.buf.writeUIntLE(length, this.start, 3);
      this.buf[this.start + 3] = this.sequence & 0xff;
      this.sequence++;
    } else this.split(length);
    this.start = -1;
    return this;
  }

  /** A payload of 2^24 − 1 bytes or more goes out as several packets (the last one shorter). */
  private split(length: number) {
    const payload = Buffer.from(this.buf.subarray(this.start + 4, this.pos));
    this.pos = this.start;
    let at = 0;
    for (;;) {
      const n = Math.min(MAX_PACKET_PAYLOAD, length - at);
      this.ensure(4 + n);
      this.buf.writeUIntLE(n, this.pos, 3);
      this.buf[this.pos + 3] = this.sequence & 0xff;
      this.sequence++;
      payload.copy(this.buf, this.pos + 4, at, at + n);
      this.pos += 4 + n;
      at += n;
      if (n < MAX_PACKET_PAYLOAD) break;
    }
  }

  int1(n: number) {
    this.ensure(1);
    this.buf[this.pos++] = n & 0xff;
    return this;
  }

  int2(n: number) {
    this.ensure(2);
    this.buf.writeUInt16LE(n & 0xffff, this.pos);
    this.pos += 2;
    return this;
  }

  int3(n: number) {
    this.ensure(3);
    this.buf.writeUIntLE(n & 0xffffff, this.pos, 3);
    this.pos += 3;
    return this;
  }

  int4(n: number) {
    this.ensure(4);
    this.buf.writeUInt32LE(n >>> 0, this.pos);
    this.pos += 4;
    return this;
  }

  /** A signed or unsigned 64-bit integer (two's complement either way). */
  int8(n: bigint) {
    this.ensure(8);
    this.buf.writeBigUInt64LE(BigInt.asUintN(64, n), this.pos);
    this.pos += 8;
    return this;
  }

  float(n: number) {
    this.ensure(4);
    this.buf.writeFloatLE(n, this.pos);
    this.pos += 4;
    return this;
  }

  double(n: number) {
    this.ensure(8);
    this.buf.writeDoubleLE(n, this.pos);
    this.pos += 8;
    return this;
  }

  /** A length-encoded integer. */
  lenenc(n: number) {
    if (n < 251) return this.int1(n);
    if (n < 0x10000) return this.int1(0xfc).int2(n);
    if (n < 0x1000000) return this.int1(0xfd).int3(n);
    return this.int1(0xfe).int8(BigInt(n));
  }

  /** 0xFB: NULL in a text row. */
  nullCell() {
    return this.int1(0xfb);
  }

  lenencString(s: string) {
    const n = s.length;
    // Short ASCII (numbers, dates, most names) byte by byte: cheaper than a native UTF-8 write per cell.
    if (n < 32) {
      this.ensure(1 + n * 3);
      const buf = this.buf;
      const at = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        buf[at + i] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos = at + n;
        return this;
      }
    }
    // One byte per character is the common case: write straight after a one-byte length.
    if (n < 251) {
      this.ensure(1 + n * 3);
      const written = this.buf.write(s, this.pos + 1, 'utf8');
      if (written < 251) {
        this.buf[this.pos] = written;
        this.pos += 1 + written;
        return this;
      }
    }
    const bytes = Buffer.byteLength(s, 'utf8');
    this.lenenc(bytes);
    this.ensure(bytes);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    return this;
  }

  lenencBytes(b: Uint8Array) {
    this.lenenc(b.length);
    return this.bytes(b);
  }

  bytes(b: Uint8Array) {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /** A string to the end of the packet (no length, no terminator). */
  string(s: string) {
    const bytes = Buffer.byteLength(s, 'utf8');
    this.ensure(bytes);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    return this;
  }

  nulString(s: string) {
    return this.string(s).int1(0);
  }

  zeros(n: number) {
    this.ensure(n);
    this.buf.fill(0, this.pos, this.pos + n);
    this.pos += n;
    return this;
  }

  /**
   * Everything written so far, as a copy the caller owns (a socket may hold it until sent); the
   * writer keeps its buffer and starts empty again. Copying the few bytes of a typical answer is
   * cheaper than a fresh buffer per answer (the allocator's pool serves small copies).
   */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.pos));
    this.pos = 0;
    // A buffer grown for one large answer is not kept for the connection's lifetime.
    if (this.buf.length > 4 * 1024 * 1024) this.buf = Buffer.allocUnsafe(this.initial);
    return out;
  }
}

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

/** A client's packet over max_allowed_packet (MySQL's error 1153, after which it closes the connection). */
export class PacketTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`Got a packet bigger than 'max_allowed_packet' bytes (${limit})`);
    this.name = 'PacketTooLarge';
  }
}

export class MalformedPacket extends Error {
  constructor(message: string) {
    super(`Malformed packet: ${message}`);
    this.name = 'MalformedPacket';
  }
}
