import type net from 'node:net';
import tls from 'node:tls';
import { MysqlError, sqlStateOf } from '../outcome';
import { PacketReader, PacketTooLarge, type Packet } from '../protocol/packetReader';
import { PacketWriter } from '../protocol/packetWriter';
import { errPacket } from '../protocol/packets';
import { prepended } from '../../shared/prependedStream';

/** What the connection hears of its socket: the client went away, or the socket failed (then went away). */
export type ChannelEvents = {
  gone(): void;
  failed(err: Error): void;
};

/**
 * A client's socket as packets: the packets it sends, one at a time, and the packets written for it,
 * sent when flushed (waiting while the client reads slower). Survives the switch to TLS after the
 * SSL request.
 */
export class ClientChannel {
  private socket: net.Socket | tls.TLSSocket;
  private readonly reader: PacketReader;
  readonly writer = new PacketWriter();
  private wake: (() => void) | undefined;
  private isClosed = false;

  constructor(
    socket: net.Socket,
    maxPacketBytes: number,
    private readonly events: ChannelEvents,
  ) {
    this.socket = socket;
    this.reader = new PacketReader(maxPacketBytes);
    this.listen(socket);
  }

  /** The client has gone (or is being sent away): nothing more is read or sent. */
  get closed() {
    return this.isClosed;
  }

  get secure() {
    return this.socket instanceof tls.TLSSocket;
  }

  private readonly onData = (chunk: Buffer) => {
    this.reader.feed(chunk);
    this.wakeUp();
  };
  private readonly onGone = () => {
    this.isClosed = true;
    this.events.gone();
    this.wakeUp();
  };
  private readonly onError = (err: Error) => {
    this.events.failed(err);
    this.onGone();
  };

  private listen(s: net.Socket | tls.TLSSocket) {
    s.on('data', this.onData);
    s.on('end', this.onGone);
    s.on('close', this.onGone);
    s.on('error', this.onError);
  }

  private unlisten(s: net.Socket | tls.TLSSocket) {
    s.off('data', this.onData);
    s.off('end', this.onGone);
    s.off('close', this.onGone);
    s.off('error', this.onError);
  }

  private wakeUp() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** The client's next packet; null once it has gone. */
  async next(): Promise<Packet | null> {
    for (;;) {
      const packet = this.readPacket();
      if (packet) return packet;
      if (this.isClosed) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** A packet already received, if any. One over max_allowed_packet ends the connection (1153), as in MySQL. */
  readPacket(): Packet | undefined {
    try {
      return this.reader.read();
    } catch (err) {
      if (!(err instanceof PacketTooLarge)) throw err;
      this.writer.sequence = 0;
      this.error(MysqlError.PacketTooLarge, err.message);
      void this.flush();
      this.socket.end();
      this.isClosed = true;
      this.events.gone();
      return undefined;
    }
  }

  /** Writes an error packet (sent with the next flush). */
  error(code: number, message: string) {
    errPacket(this.writer, code, sqlStateOf(code), message);
  }

  /** Writes what the writer holds; the promise (if any) settles when the client has taken it. */
  flush(): Promise<void> | undefined {
    if (this.writer.size === 0) return undefined;
    const bytes = this.writer.take();
    if (this.isClosed) return undefined;
    if (this.socket.write(bytes)) return undefined;
    const socket = this.socket;
    return new Promise((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
  }

  async flushed() {
    const wait = this.flush();
    if (wait) await wait;
  }

  /** The SSL request was the last plain packet: what follows is a TLS handshake, then packets inside TLS. */
  async upgradeToTls(context: tls.SecureContext) {
    const raw = this.socket;
    this.unlisten(raw);
    const rest = this.reader.takeRest();
    const secure = new tls.TLSSocket(rest.length > 0 ? prepended(raw, rest) : raw, {
      isServer: true,
      secureContext: context,
    });
    this.socket = secure;
    this.listen(secure);
    await new Promise<void>((resolve) => {
      const done = () => {
        secure.off('secure', done);
        secure.off('close', done);
        resolve();
      };
      secure.on('secure', done);
      secure.on('close', done);
    });
  }

  /** Cuts the connection: the client is gone for the connection at once. */
  destroy() {
    this.isClosed = true;
    this.events.gone();
    this.socket.destroy();
    this.wakeUp();
  }
}
