import type net from 'node:net';
import tls from 'node:tls';
import { firstEvent } from '../shared/firstEvent';
import { prepended } from '../shared/prependedStream';

/**
 * The socket half every wire door's channel shares: its reads woken when input (or the end) comes,
 * its writes waiting while the client reads slower, and the switch to TLS after the client asks
 * for it. Each door keeps its own framing and its own way of hearing that the client went.
 */
export class SocketChannel<W extends { readonly size: number; take(): Buffer }> {
  private wake: (() => void) | undefined;
  protected isClosed = false;

  constructor(
    protected socket: net.Socket | tls.TLSSocket,
    /** What is written for the client, sent when flushed. */
    readonly writer: W,
  ) {}

  /** The client has gone (or is being sent away): nothing more is read or sent. */
  get closed() {
    return this.isClosed;
  }

  get secure() {
    return this.socket instanceof tls.TLSSocket;
  }

  /** Settles at the next input, end or close (wakeUp). */
  protected asleep(): Promise<void> {
    return new Promise<void>((resolve) => (this.wake = resolve));
  }

  protected wakeUp() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Sends what the writer holds; the promise (if any) settles when the client has taken it or the socket closed. */
  flush(): Promise<void> | undefined {
    if (this.writer.size === 0) return undefined;
    const bytes = this.writer.take();
    if (this.isClosed || this.socket.write(bytes)) return undefined;
    return firstEvent(this.socket, ['drain', 'close']);
  }

  /**
   * Puts TLS over the socket (what the client sent past its request for it, `rest`, read first) and
   * waits for the handshake to end, or the socket to close; the caller listens to the TLS socket
   * before the wait (`listen`), so its end is heard.
   */
  protected async switchToTls(
    context: tls.SecureContext,
    rest: Buffer,
    listen: (secure: tls.TLSSocket) => void,
  ): Promise<void> {
    const raw = this.socket;
    const secure = new tls.TLSSocket(rest.length > 0 ? prepended(raw, rest) : raw, {
      isServer: true,
      secureContext: context,
    });
    this.socket = secure;
    listen(secure);
    await firstEvent(secure, ['secure', 'close']);
  }
}
