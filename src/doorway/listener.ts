import net from 'node:net';
import { admission, type Ticket } from './admission';
import type { ServerLogger } from './engine';

/** What the accept loop needs of one client's connection, whatever protocol it speaks. */
type DoorConnection = {
  /** Settles once the connection is gone. */
  readonly done: Promise<void>;
  /** Ends the connection now if no statement runs, else once it ends. */
  closeWhenIdle(): void;
  destroy(): void;
};

/** Where a door listens and whom it admits: each door's options, forwarded to the accept loop as given. */
export type DoorPlace = {
  host: string;
  /** 0: any free port (the answer says which). */
  port: number;
  logger: ServerLogger;
  /** Signed-in connections at once (default 1000); past it, the door's "too many connections". */
  maxConnections?: number;
  /**
   * Connections not signed in yet, at once (default 256) and from one address (default 32); they
   * do not count against maxConnections. Past either, the oldest such connection (of that address,
   * or of the address holding the most) is dropped, so a newcomer always gets its turn.
   */
  maxPreAuth?: number;
  maxPreAuthPerAddress?: number;
};

/** The place fields of a door's options (which hold more besides). */
export const doorPlace = (o: DoorPlace): DoorPlace => ({
  host: o.host,
  port: o.port,
  logger: o.logger,
  maxConnections: o.maxConnections,
  maxPreAuth: o.maxPreAuth,
  maxPreAuthPerAddress: o.maxPreAuthPerAddress,
});

type ListenerOptions<C extends DoorConnection> = DoorPlace & {
  /** The protocol, as logs name it (`MySQL`, `PostgreSQL`). */
  protocol: string;
  /** The open connections by id, kept by the loop: the protocol reads it (KILL, cancel requests). */
  connections: Map<number, C>;
  /** The protocol's "too many connections", sent in place of its greeting. */
  refusal(): Buffer;
  /** A connection for an admitted socket; it calls `ticket.loggedIn` once signed in. */
  open(socket: net.Socket, id: number, ticket: Ticket): C;
  /** A connection ended (the credentials forget what they noted of it). */
  ended?(id: number): void;
  /** Interrupts a connection's running statement at shutdown, past the grace period. */
  interrupt(connection: C): void;
  /** What the "listening" log line says besides host and port. */
  describe?: Record<string, unknown>;
};

type Listener = {
  readonly port: number;
  /**
   * Stops accepting, ends idle connections, lets running statements finish for `graceMs`, then
   * interrupts them and ends every connection.
   */
  close(graceMs: number): Promise<void>;
};

/** How long interrupted statements get to send their error before their connections are cut. */
const INTERRUPT_SETTLE_MS = 1000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * The accept loop both wire doors share: admission (the signed-in and pre-authentication rooms,
 * `admission.ts`), the registry of open connections, listening, and closing with a grace period.
 * What a socket says once admitted is the protocol's (`open`).
 */
export const listenForClients = async <C extends DoorConnection>(
  o: ListenerOptions<C>,
): Promise<Listener> => {
  const { connections } = o;
  let nextId = 1;
  const door = admission({
    maxConnections: o.maxConnections ?? 1000,
    maxPreAuth: o.maxPreAuth ?? 256,
    maxPreAuthPerAddress: o.maxPreAuthPerAddress ?? 32,
  });
  const server = net.createServer((socket) => {
    if (door.full()) {
      // A refused client may reset the socket before it reads the refusal: never an unheard error.
      // Its first packet is not read: the refusal is all it gets, then the socket is gone (left
      // half-open, it would hold the listener's close for good).
      socket.on('error', () => undefined);
      socket.end(o.refusal(), () => socket.destroy());
      return;
    }
    const id = nextId++;
    // Until it signs in, the connection is in the pre-authentication room (which may drop it).
    const ticket = door.admit(socket, () => connections.get(id)?.destroy());
    const connection = o.open(socket, id, ticket);
    connections.set(id, connection);
    void connection.done.then(() => {
      connections.delete(id);
      ticket.ended();
      o.ended?.(id);
    });
  });
  server.on('error', (err) => o.logger.error({ err }, `${o.protocol} listener error`));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : o.port;
  o.logger.info({ host: o.host, port, ...o.describe }, `${o.protocol} protocol listening`);

  let closing: Promise<void> | undefined;
  const allDone = () => Promise.all([...connections.values()].map((c) => c.done)).then(() => undefined);
  return {
    port,
    close: (graceMs) =>
      (closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const c of connections.values()) c.closeWhenIdle();
        const settled = await Promise.race([allDone().then(() => true), sleep(graceMs).then(() => false)]);
        if (!settled) {
          o.logger.warn(
            { running: connections.size },
            `${o.protocol} grace period over: interrupting running statements`,
          );
          for (const c of connections.values()) o.interrupt(c);
          await Promise.race([allDone(), sleep(INTERRUPT_SETTLE_MS)]);
          for (const c of connections.values()) c.destroy();
        }
        await stopped;
      })()),
  };
};
