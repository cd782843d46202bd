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

/** A client's packet over max_allowed_packet (MySQL's error 1153, after which it closes the connection). */
export class PacketTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`Got a packet bigger than 'max_allowed_packet' bytes (${limit})`);
    this.name = 'PacketTooLarge';
  }
}
