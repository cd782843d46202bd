import { integerDigits } from '../../shared/integerDigits';
import { MAX_PACKET_PAYLOAD } from './constants';

/** "00" … "99": the two digits of every number below 100, as bytes. */
const DIGIT_PAIRS = Buffer.from(
  Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''),
  'latin1',
);

/** Writes the two digits of `pair` (0 … 99) ending at `at`; the index before them. */
const writePair = (buf: Buffer, at: number, pair: number) => {
  buf[at] = DIGIT_PAIRS[2 * pair + 1]!;
  buf[at - 1] = DIGIT_PAIRS[2 * pair]!;
  return at - 2;
};

/** Pieces this large are handed over by `take` rather than copied. */
const HANDED_OVER_BYTES = 16 * 1024;

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
      // The three length bytes and the sequence number, stored one by one (once per row).
      const buf = this.buf;
      const at = this.start;
      buf[at] = length & 0xff;
      buf[at + 1] = (length >>> 8) & 0xff;
      buf[at + 2] = length >>> 16;
      buf[at + 3] = this.sequence & 0xff;
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

  /** A safe integer as a length-encoded string of its decimal digits (a text-protocol cell), made in place. */
  lenencInteger(n: number) {
    const digits = integerDigits(n);
    this.ensure(1 + digits);
    const buf = this.buf;
    buf[this.pos] = digits;
    // Written from the last digit back, two at a time: in a streamed result this was the largest
    // cost on the main thread, a division per digit.
    let at = this.pos + digits;
    let rest = n < 0 ? -n : n;
    while (rest >= 0x80000000) {
      const next = Math.floor(rest / 100);
      at = writePair(buf, at, rest - next * 100);
      rest = next;
    }
    // Below 2^31 the arithmetic is 32-bit integer arithmetic.
    let small = rest | 0;
    while (small >= 100) {
      const next = (small / 100) | 0;
      at = writePair(buf, at, small - next * 100);
      small = next;
    }
    if (small >= 10) at = writePair(buf, at, small);
    else buf[at--] = 0x30 + small;
    if (n < 0) buf[at] = 0x2d;
    this.pos += 1 + digits;
    return this;
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
   * Everything written so far, as bytes the caller owns (a socket may hold them until sent); the
   * writer starts empty again. A typical answer's few bytes are copied (the allocator's pool serves
   * small copies) and the writer keeps its buffer; a large piece (a result's rows) is handed over
   * whole and the writer takes a fresh buffer of the same size, since copying 64 KiB cost more.
   */
  take(): Buffer {
    const taken = this.pos;
    this.pos = 0;
    // A buffer grown for one large answer is not kept for the connection's lifetime.
    const size = this.buf.length > 4 * 1024 * 1024 ? this.initial : this.buf.length;
    if (taken < HANDED_OVER_BYTES) {
      const out = Buffer.from(this.buf.subarray(0, taken));
      if (size !== this.buf.length) this.buf = Buffer.allocUnsafe(size);
      return out;
    }
    const out = this.buf.subarray(0, taken);
    this.buf = Buffer.allocUnsafe(size);
    return out;
  }
}
