import type net from 'node:net';
import type tls from 'node:tls';
import { SocketChannel } from '../../doorway/socketChannel';
import {
  decodeMessage,
  decodeStartup,
  FrameReader,
  type FrontendMessage,
  type StartupPacket,
} from '../protocol/frontend';
import { MessageWriter } from '../protocol/messageWriter';

/** The largest message taken before login. */
const PRE_LOGIN_MESSAGE_BYTES = 64 * 1024;

/** Input a connection has not read yet beyond this pauses the socket (a client pipelining without end). */
const PAUSE_BYTES = 4 * 1024 * 1024;

/**
 * A client's socket as messages: what it sends, read one at a time when the connection asks, and
 * what is written for it, sent when flushed (waiting while the client reads slower). Survives the
 * switch to TLS after an SSLRequest.
 */
export class PgChannel extends SocketChannel<MessageWriter> {
  private readonly frames: FrameReader;
  private buffered = 0;
  private paused = false;

  constructor(
    socket: net.Socket,
    private readonly maxMessageBytes: number,
    private readonly onGone: () => void,
  ) {
    super(socket, new MessageWriter());
    // Before login only small messages (a password) are taken: unauthenticated clients hold little.
    this.frames = new FrameReader(Math.min(maxMessageBytes, PRE_LOGIN_MESSAGE_BYTES));
    socket.setKeepAlive(true, 60_000);
    this.listen(socket);
  }

  get remoteAddress(): string {
    return this.socket.remoteAddress ?? '';
  }

  private readonly onData = (chunk: Buffer) => {
    this.frames.push(chunk);
    this.buffered += chunk.length;
    if (this.buffered > PAUSE_BYTES && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    this.wakeUp();
  };

  private readonly onEnd = () => {
    if (this.isClosed) return;
    this.isClosed = true;
    this.onGone();
    this.wakeUp();
  };

  private readonly onError = () => undefined;

  private listen(s: net.Socket | tls.TLSSocket) {
    s.on('data', this.onData);
    s.on('end', this.onEnd);
    s.on('close', this.onEnd);
    s.on('error', this.onError);
  }

  private unlisten(s: net.Socket | tls.TLSSocket) {
    s.off('data', this.onData);
    s.off('end', this.onEnd);
    s.off('close', this.onEnd);
  }

  private resume() {
    this.paused = false;
    this.socket.resume();
  }

  private async waitFor<T>(read: () => T | undefined): Promise<T | null> {
    for (;;) {
      let value: T | undefined;
      try {
        value = read();
      } catch (error) {
        // A message read whole but not understood (MalformedMessage): the session goes on, so the
        // socket must not stay paused behind it.
        if (this.paused && this.buffered < PAUSE_BYTES / 2) this.resume();
        throw error;
      }
      if (value !== undefined) {
        if (this.paused && this.buffered < PAUSE_BYTES / 2) this.resume();
        return value;
      }
      // A message larger than the pause threshold is still arriving: read on (its size was
      // checked against the limit when its length came in).
      if (this.paused) this.resume();
      if (this.isClosed) return null;
      await this.asleep();
    }
  }

  /** The next untyped first message (startup, SSL or GSS request, cancel); null once the client has gone. */
  nextStartup(): Promise<StartupPacket | null> {
    return this.waitFor(() => {
      const body = this.frames.nextStartup();
      if (!body) return undefined;
      this.buffered -= body.length + 4;
      return decodeStartup(body);
    });
  }

  /**
   * The next typed message; null once the client has gone. Throws MalformedMessage for one framed
   * right whose fields cannot be read, ProtocolViolation on bad framing.
   */
  next(): Promise<FrontendMessage | null> {
    return this.waitFor(() => {
      const frame = this.frames.next();
      if (!frame) return undefined;
      this.buffered -= frame.body.length + 5;
      return decodeMessage(frame.type, frame.body);
    });
  }

  /** Logged in: messages up to the configured size are taken. */
  loggedIn() {
    this.frames.maxMessageBytes = this.maxMessageBytes;
  }

  /** Flushes and waits for the client to take it, or for `signal` (a cancel) if that comes first. */
  async flushed(signal?: AbortSignal) {
    const wait = this.flush();
    if (!wait || signal?.aborted) return;
    if (!signal) return wait;
    await new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done);
      void wait.then(done);
    });
  }

  /** After 'S' is sent: what follows is a TLS handshake, then messages inside TLS. */
  async upgradeToTls(context: tls.SecureContext) {
    this.unlisten(this.socket);
    const rest = this.frames.takeRest();
    this.buffered = 0;
    await this.switchToTls(context, rest, (secure) => this.listen(secure));
  }

  /** Sends what is written, then ends the connection (a FATAL error, Terminate). */
  async end() {
    await this.flushed();
    this.isClosed = true;
    this.socket.end();
    this.wakeUp();
  }

  /** Cuts the connection at once. */
  destroy() {
    this.isClosed = true;
    this.socket.destroy();
    this.wakeUp();
  }
}
