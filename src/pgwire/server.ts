import { randomInt } from 'node:crypto';
import tls from 'node:tls';
import type { DoorAuthenticator } from '../doorway/credentials';
import type { SqlEngine } from '../doorway/engine';
import { doorPlace, listenForClients, type DoorPlace } from '../doorway/listener';
import { ShadowCatalog, type CatalogLimits } from './catalog/shadowCatalog';
import { PgConnection } from './connection/pgConnection';
import { PgState } from './errors';
import { errorResponse } from './protocol/backend';
import { MessageWriter } from './protocol/messageWriter';

/** Past maxConnections a client is refused with 53300 (too many clients). */
export type PgServerOptions = DoorPlace & {
  engine: SqlEngine;
  /** PEM certificate chain and private key: clients may then switch to TLS (SSLRequest). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Configured credentials; without, any user connects with no password asked. */
  auth?: DoorAuthenticator;
  /** Rows a result carries at most. */
  maxRows?: number;
  /** What `SELECT version()` answers. */
  versionText?: string;
  /** Where statements run when the client names no database (the engine's default project). */
  defaultDatabase?: string;
  /** Largest message a client may send (default 64 MiB); more ends its connection. */
  maxMessageBytes?: number;
  /** A client not logged in by then is disconnected (default 5 s). */
  handshakeTimeoutMs?: number;
  /** Parameters (`$n`) a prepared statement may take (default 10,000, SQL_MAX_PARAMS's); more is 54023. */
  maxParams?: number;
  /** The catalog shadow's bounds (catalog/shadowCatalog.ts: 10 s, 128 MB, 2 processes by default). */
  catalog?: Partial<CatalogLimits>;
};

export type PgServer = {
  readonly port: number;
  connections(): number;
  /** Catalog queries running now (the shadow's processes at work). */
  catalogQueries(): number;
  /**
   * Stops accepting, ends idle connections, lets running statements finish for `graceMs`, then
   * interrupts them (their clients get 57P01) and ends every connection.
   */
  close(graceMs: number): Promise<void>;
};

/** Listens for PostgreSQL clients and serves the SQL engine to them. */
export const startPgServer = async (o: PgServerOptions): Promise<PgServer> => {
  const connections = new Map<number, PgConnection>();
  const secureContext = o.tls ? tls.createSecureContext({ cert: o.tls.cert, key: o.tls.key }) : undefined;
  const catalog = new ShadowCatalog(o.catalog);
  // A CancelRequest names its target by process id and a secret only that connection's client was told.
  const cancel = (processId: number, secret: number) => {
    const target = connections.get(processId);
    if (target && target.secret === secret) target.stop('cancel');
  };
  // The same accept loop and admission as the MySQL door's (src/doorway): one behaviour, one place.
  const listener = await listenForClients({
    protocol: 'PostgreSQL',
    ...doorPlace(o),
    connections,
    refusal: () => {
      const w = new MessageWriter();
      errorResponse(w, {
        severity: 'FATAL',
        code: PgState.TooManyConnections,
        message: 'sorry, too many clients already',
      });
      return w.take();
    },
    open: (socket, id, ticket) =>
      new PgConnection(socket, id, randomInt(1, 2 ** 31 - 1), {
        engine: o.engine,
        auth: o.auth,
        tls: secureContext,
        logger: o.logger,
        maxRows: o.maxRows,
        maxMessageBytes: o.maxMessageBytes ?? 64 * 1024 * 1024,
        handshakeTimeoutMs: o.handshakeTimeoutMs ?? 5_000,
        versionText: o.versionText ?? 'PostgreSQL 16.0 (mindledger)',
        defaultDatabase: o.defaultDatabase ?? 'mindsdb',
        catalog,
        cancel,
        maxParams: o.maxParams ?? 10_000,
        onLoggedIn: ticket.loggedIn,
      }),
    ended: (id) => o.auth?.signedOut?.(id),
    interrupt: (c) => c.stop('shutdown'),
    describe: { tls: secureContext !== undefined },
  });

  let closing: Promise<void> | undefined;
  return {
    port: listener.port,
    connections: () => connections.size,
    catalogQueries: () => catalog.running(),
    close: (graceMs) =>
      (closing ??= (async () => {
        await listener.close(graceMs);
        await catalog.close();
      })()),
  };
};
