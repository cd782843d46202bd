/**
 * Frontend messages: what a PostgreSQL client sends (protocol 3.0). Framing (`FrameReader`) and
 * decoding (`decodeMessage`, `decodeStartup`) are separate so each is tested on bytes alone.
 */
import { NamedError } from '../../shared/errors';

/** The codes of the untyped first messages (startup packet, SSL/GSS requests, cancel). */
const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

export type StartupPacket =
  | { kind: 'startup'; params: Record<string, string>; minorVersion: number; protocolOptions: string[] }
  | { kind: 'ssl' }
  | { kind: 'gssenc' }
  | { kind: 'cancel'; processId: number; secret: number }
  | { kind: 'unsupported'; code: number };

export type Bind = {
  portal: string;
  statement: string;
  /** One format per parameter after expansion (0 text, 1 binary). */
  paramFormats: number[];
  params: (Buffer | null)[];
  /** As sent: empty (all text), one (for all), or one per column. */
  resultFormats: number[];
};

export type FrontendMessage =
  | { type: 'query'; sql: string }
  | { type: 'parse'; name: string; sql: string; paramTypes: number[] }
  | ({ type: 'bind' } & Bind)
  | { type: 'describe'; target: 'statement' | 'portal'; name: string }
  | { type: 'execute'; portal: string; maxRows: number }
  | { type: 'close'; target: 'statement' | 'portal'; name: string }
  | { type: 'sync' }
  | { type: 'flush' }
  | { type: 'terminate' }
  | { type: 'password'; password: string }
  | { type: 'unsupported'; code: string };

/** A message's body could not be read as its type says (a client bug or not PostgreSQL). */
export class ProtocolViolation extends NamedError {}

/**
 * A message framed right (its length honoured) whose fields cannot be read as its type says: a NUL
 * inside a query's text, a body shorter or longer than its fields. PostgreSQL answers these with an
 * ERROR (08P01) and the session goes on; only a broken framing ends a connection.
 */
export class MalformedMessage extends ProtocolViolation {
  constructor(
    /** The message's type byte as a character ('Q', 'P', 'B', …). */
    readonly messageType: string,
    message: string,
  ) {
    super(message);
  }
}

/** Reads fields off one message body in order. */
class BodyReader {
  private at = 0;
  constructor(private readonly body: Buffer) {}

  private need(bytes: number) {
    if (this.at + bytes > this.body.length) throw new ProtocolViolation('message shorter than its fields');
  }

  int16(): number {
    this.need(2);
    const v = this.body.readInt16BE(this.at);
    this.at += 2;
    return v;
  }

  int32(): number {
    this.need(4);
    const v = this.body.readInt32BE(this.at);
    this.at += 4;
    return v;
  }

  byte(): number {
    this.need(1);
    return this.body[this.at++]!;
  }

  cstring(): string {
    const end = this.body.indexOf(0, this.at);
    if (end < 0) throw new ProtocolViolation('string without its terminating zero byte');
    const s = this.body.toString('utf8', this.at, end);
    this.at = end + 1;
    return s;
  }

  bytes(n: number): Buffer {
    this.need(n);
    const b = this.body.subarray(this.at, this.at + n);
    this.at += n;
    return b;
  }

  get done(): boolean {
    return this.at >= this.body.length;
  }
}

export const decodeStartup = (body: Buffer): StartupPacket => {
  const r = new BodyReader(body);
  const code = r.int32();
  switch (code) {
    case SSL_REQUEST:
      return { kind: 'ssl' };
    case GSSENC_REQUEST:
      return { kind: 'gssenc' };
    case CANCEL_REQUEST:
      return { kind: 'cancel', processId: r.int32(), secret: r.int32() };
    default: {
      // 3.x: a newer minor version is answered with the one this server speaks (3.0).
      if (code >>> 16 !== PROTOCOL_3 >>> 16) return { kind: 'unsupported', code };
      const params: Record<string, string> = {};
      const protocolOptions: string[] = [];
      while (!r.done) {
        const key = r.cstring();
        if (key === '') break;
        const value = r.cstring();
        if (key.startsWith('_pq_.')) protocolOptions.push(key);
        else params[key] = value;
      }
      return { kind: 'startup', params, minorVersion: code & 0xffff, protocolOptions };
    }
  }
};

const targetOf = (b: number): 'statement' | 'portal' => {
  if (b === 0x53) return 'statement';
  if (b === 0x50) return 'portal';
  throw new ProtocolViolation(`Describe/Close target must be 'S' or 'P', not ${b}`);
};

export const decodeMessage = (type: number, body: Buffer): FrontendMessage => {
  const r = new BodyReader(body);
  let message: FrontendMessage;
  try {
    message = decodeFields(type, r);
  } catch (error) {
    if (error instanceof ProtocolViolation)
      throw new MalformedMessage(String.fromCharCode(type), error.message);
    throw error;
  }
  // Bytes left over (a NUL inside a query's text, a miscounted list): PostgreSQL's "invalid message format".
  if (message.type !== 'unsupported' && !r.done)
    throw new MalformedMessage(
      String.fromCharCode(type),
      `invalid message format: ${String.fromCharCode(type)} message longer than its fields`,
    );
  return message;
};

const decodeFields = (type: number, r: BodyReader): FrontendMessage => {
  switch (String.fromCharCode(type)) {
    case 'Q':
      return { type: 'query', sql: r.cstring() };
    case 'P': {
      const name = r.cstring();
      const sql = r.cstring();
      const n = r.int16();
      const paramTypes: number[] = [];
      for (let i = 0; i < n; i++) paramTypes.push(r.int32() >>> 0);
      return { type: 'parse', name, sql, paramTypes };
    }
    case 'B': {
      const portal = r.cstring();
      const statement = r.cstring();
      const formatCount = r.int16();
      const formats: number[] = [];
      for (let i = 0; i < formatCount; i++) formats.push(r.int16());
      const paramCount = r.int16();
      const params: (Buffer | null)[] = [];
      for (let i = 0; i < paramCount; i++) {
        const length = r.int32();
        params.push(length < 0 ? null : Buffer.from(r.bytes(length)));
      }
      if (formatCount > 1 && formatCount !== paramCount)
        throw new ProtocolViolation(`Bind has ${formatCount} parameter formats for ${paramCount} parameters`);
      const paramFormats = params.map((_, i) =>
        formatCount === 0 ? 0 : formatCount === 1 ? formats[0]! : formats[i]!,
      );
      const resultCount = r.int16();
      const resultFormats: number[] = [];
      for (let i = 0; i < resultCount; i++) resultFormats.push(r.int16());
      return { type: 'bind', portal, statement, paramFormats, params, resultFormats };
    }
    case 'D':
      return { type: 'describe', target: targetOf(r.byte()), name: r.cstring() };
    case 'E':
      return { type: 'execute', portal: r.cstring(), maxRows: r.int32() };
    case 'C':
      return { type: 'close', target: targetOf(r.byte()), name: r.cstring() };
    case 'S':
      return { type: 'sync' };
    case 'H':
      return { type: 'flush' };
    case 'X':
      return { type: 'terminate' };
    case 'p':
      return { type: 'password', password: r.cstring() };
    default:
      return { type: 'unsupported', code: String.fromCharCode(type) };
  }
};

/**
 * Splits the byte stream into messages. The first message of a connection (and the one after an
 * SSL/GSS refusal) has no type byte: the connection asks for `nextStartup` then, `next` after.
 */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(public maxMessageBytes: number) {}

  push(chunk: Buffer) {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
  }

  private peek(bytes: number): Buffer | undefined {
    if (this.pendingBytes < bytes) return undefined;
    if (this.pending[0]!.length < bytes) this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!;
  }

  private consume(bytes: number): Buffer {
    const head = this.peek(bytes)!;
    const out = head.subarray(0, bytes);
    if (head.length === bytes) this.pending.shift();
    else this.pending[0] = head.subarray(bytes);
    this.pendingBytes -= bytes;
    return out;
  }

  /** Bytes received and not yet framed (handed to the TLS layer after an SSLRequest). */
  takeRest(): Buffer {
    const rest = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    return rest;
  }

  /** The next whole startup packet's body (after its length), or undefined until it has arrived. */
  nextStartup(): Buffer | undefined {
    const head = this.peek(4);
    if (!head) return undefined;
    const length = head.readInt32BE(0);
    if (length < 8 || length > 10_000) throw new ProtocolViolation(`invalid startup packet length ${length}`);
    if (this.pendingBytes < length) return undefined;
    return this.consume(length).subarray(4);
  }

  /** The next whole typed message, or undefined until it has arrived. */
  next(): { type: number; body: Buffer } | undefined {
    const head = this.peek(5);
    if (!head) return undefined;
    const length = head.readInt32BE(1);
    if (length < 4) throw new ProtocolViolation(`invalid message length ${length}`);
    if (length - 4 > this.maxMessageBytes)
      throw new ProtocolViolation(
        `message of ${length - 4} bytes is over the limit of ${this.maxMessageBytes}`,
      );
    if (this.pendingBytes < length + 1) return undefined;
    const whole = this.consume(length + 1);
    return { type: whole[0]!, body: whole.subarray(5) };
  }
}
