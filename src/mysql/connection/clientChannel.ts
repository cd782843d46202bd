import type net from 'node:net';
import type tls from 'node:tls';
import { MysqlError, sqlStateOf } from '../outcome';
import { PacketReader, PacketTooLarge, type Packet } from '../protocol/packetReader';
import { PacketWriter } from '../protocol/packetWriter';
import { errPacket } from '../protocol/packets';
import { SocketChannel } from '../../doorway/socketChannel';

/** What the connection hears of its socket: the client went away, or the socket failed (then went away). */
type ChannelEvents = {
  gone(): void;
  failed(err: Error): void;
};

/**
 * A client's socket as packets: the packets it sends, one at a time, and the packets written for it,
 * sent when flushed (waiting while the client reads slower). Survives the switch to TLS after the
 * SSL request.
 */
export class ClientChannel extends SocketChannel<PacketWriter> {
  private readonly reader: PacketReader;

  constructor(
    socket: net.Socket,
    maxPacketBytes: number,
    private readonly events: ChannelEvents,
  ) {
    super(socket, new PacketWriter());
    this.reader = new PacketReader(maxPacketBytes);
    this.listen(socket);
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

  /** The client's next packet; null once it has gone. */
  async next(): Promise<Packet | null> {
    for (;;) {
      const packet = this.readPacket();
      if (packet) return packet;
      if (this.isClosed) return null;
      await this.asleep();
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

  async flushed() {
    const wait = this.flush();
    if (wait) await wait;
  }

  /** The SSL request was the last plain packet: what follows is a TLS handshake, then packets inside TLS. */
  async upgradeToTls(context: tls.SecureContext) {
    this.unlisten(this.socket);
    await this.switchToTls(context, this.reader.takeRest(), (secure) => this.listen(secure));
  }

  /** Cuts the connection: the client is gone for the connection at once. */
  destroy() {
    this.isClosed = true;
    this.events.gone();
    this.socket.destroy();
    this.wakeUp();
  }
}
