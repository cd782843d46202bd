/** Texts up to this many UTF-16 units are tried as ASCII first (`lengthPrefixed`). */
const SHORT_TEXT = 32;

/**
 * Backend messages into one growing buffer: a type byte, a 32-bit length (counting itself), the
 * body. Messages are appended one after another and taken whole (`take`) for one socket write, so a
 * result's rows leave in large writes rather than one write per row.
 */
export class MessageWriter {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 0;
  /** Where the open message's length goes (-1: none open). */
  private lengthAt = -1;

  /** Bytes written and not yet taken. */
  get size(): number {
    return this.length;
  }

  private room(bytes: number) {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const bigger = Buffer.allocUnsafe(size);
    this.buffer.copy(bigger, 0, 0, this.length);
    this.buffer = bigger;
  }

  /** Opens a message of type `type` (one ASCII letter); `end()` writes its length. */
  begin(type: string): this {
    this.room(5);
    this.buffer[this.length] = type.charCodeAt(0);
    this.lengthAt = this.length + 1;
    this.length += 5;
    return this;
  }

  end(): this {
    this.buffer.writeInt32BE(this.length - this.lengthAt, this.lengthAt);
    this.lengthAt = -1;
    return this;
  }

  /** A byte outside any message (the answer to SSLRequest: 'S' or 'N'). */
  rawByte(b: number): this {
    this.room(1);
    this.buffer[this.length++] = b;
    return this;
  }

  int8(v: number): this {
    this.room(1);
    this.buffer[this.length++] = v & 0xff;
    return this;
  }

  int16(v: number): this {
    this.room(2);
    this.buffer.writeInt16BE(v, this.length);
    this.length += 2;
    return this;
  }

  int32(v: number): this {
    this.room(4);
    this.buffer.writeInt32BE(v | 0, this.length);
    this.length += 4;
    return this;
  }

  uint32(v: number): this {
    this.room(4);
    this.buffer.writeUInt32BE(v >>> 0, this.length);
    this.length += 4;
    return this;
  }

  /** A NUL-terminated UTF-8 string (names, tags, error fields). */
  cstring(s: string): this {
    const bytes = Buffer.byteLength(s);
    this.room(bytes + 1);
    this.buffer.write(s, this.length, 'utf8');
    this.length += bytes;
    this.buffer[this.length++] = 0;
    return this;
  }

  /** A value with its 32-bit length in front (a DataRow cell); `null` is length -1. */
  lengthPrefixed(value: string | Buffer | null): this {
    if (value === null) return this.int32(-1);
    if (typeof value === 'string') {
      // At most 3 bytes per UTF-16 unit: room first, then the real length is patched in.
      this.room(4 + value.length * 3);
      // A short ASCII text (a number, a date, a name) is copied unit by unit: cheaper than a call
      // into the UTF-8 encoder for every cell of a large result. Anything else is encoded.
      if (value.length <= SHORT_TEXT) {
        const at = this.length + 4;
        let k = 0;
        for (; k < value.length; k++) {
          const unit = value.charCodeAt(k);
          if (unit > 0x7f) break;
          this.buffer[at + k] = unit;
        }
        if (k === value.length) {
          this.buffer.writeInt32BE(k, this.length);
          this.length = at + k;
          return this;
        }
      }
      const bytes = this.buffer.write(value, this.length + 4, 'utf8');
      this.buffer.writeInt32BE(bytes, this.length);
      this.length += 4 + bytes;
      return this;
    }
    this.room(4 + value.length);
    this.buffer.writeInt32BE(value.length, this.length);
    value.copy(this.buffer, this.length + 4);
    this.length += 4 + value.length;
    return this;
  }

  /** Forgets what was written past `size` (a message that could not be finished). */
  truncate(size: number): this {
    this.length = Math.min(this.length, size);
    this.lengthAt = -1;
    return this;
  }

  /** Everything written so far, as a buffer of its own; the writer starts empty again. */
  take(): Buffer {
    const out = Buffer.from(this.buffer.subarray(0, this.length));
    this.length = 0;
    return out;
  }
}
