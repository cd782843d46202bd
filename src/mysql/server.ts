import os from 'node:os';
import tls from 'node:tls';
import type { DoorAuthenticator } from '../doorway/credentials';
import type { SqlEngine } from '../doorway/engine';
import { doorPlace, listenForClients, type DoorPlace } from '../doorway/listener';
import { BoundedMap } from '../shared/boundedMap';
import { selfSignedCertificate } from '../shared/selfSignedCertificate';
import { MysqlConnection } from './connection/mysqlConnection';
import { CACHING_SHA2, lazyRsaKeys, NATIVE, type AuthPlugin, type RsaKeys } from './protocol/auth';
import { PacketWriter } from './protocol/packetWriter';
import { errPacket } from './protocol/packets';
import type { ServerView } from './session/view';
import type { ServerFacts } from './session/variables';

/** Past maxConnections a client is refused with error 1040 (Too many connections). */
export type MysqlServerOptions = DoorPlace & {
  engine: SqlEngine;
  /**
   * PEM certificate chain and private key clients may switch to TLS with (CLIENT_SSL). Without, a
   * self-signed certificate is made at start (see `serverTls`); `false` offers no TLS at all.
   */
  tls?: { cert: string | Buffer; key: string | Buffer } | false;
  /** Configured credentials; without, any user and password connect. */
  auth?: DoorAuthenticator;
  /** Rows a streamed result carries at most (the engine's `execute` cuts its own answers). */
  maxRows?: number;
  /** Greeting's and @@version's server version; clients read features from it (8.0 and later: MySQL 8). */
  serverVersion?: string;
  versionComment?: string;
  /** Where bare names resolve before a USE (the engine's default database). */
  defaultDatabase?: string;
  /** The plugin the greeting proposes; clients may answer with the other one. */
  defaultAuthPlugin?: AuthPlugin;
  /** The RSA pair caching_sha2_password hands out over plain TCP; made at first need if absent. */
  rsaKeys?: RsaKeys;
  /** Largest packet a client may send, max_allowed_packet (default 64 MiB); more ends its connection with 1153. */
  maxPacketBytes?: number;
  /** A client not logged in by then is disconnected (default 5 s; MySQL's connect_timeout). */
  handshakeTimeoutMs?: number;
  /** `?` placeholders a prepared statement may hold (default 10,000, SQL_MAX_PARAMS's); more is error 1390. */
  maxParams?: number;
};

export type MysqlServer = {
  /** The port it listens on. */
  readonly port: number;
  /** Open connections (for status and tests). */
  connections(): number;
  /**
   * Stops accepting, ends idle connections, lets running statements finish for `graceMs`, then
   * interrupts them (their clients get error 1317) and ends every connection.
   */
  close(graceMs: number): Promise<void>;
};

/**
 * caching_sha2_password's digests kept for the fast path (one per user and credential generation):
 * past this many the oldest goes (its user takes the full authentication once more).
 */
const SHA2_CACHE_ENTRIES = 10_000;

/**
 * The certificate TLS is served with. The door offers TLS unless told not to: the stock clients of
 * both families switch to it by default (MariaDB's `mysql` has `ssl` on, MySQL's and Connector/J
 * `sslMode=PREFERRED`), and it is what carries caching_sha2_password's full authentication, the
 * only one the scrypt-hashed passwords allow, safely. Without it, MariaDB's Connector/C (3.3), its
 * `ssl` option on but the server offering none, takes the plain connection for a secure one and
 * sends the password in clear (its `is_connection_secure` reads the option, not the connection).
 * Clients that verify the certificate need the operator's (MYSQL_TLS_CERT/KEY) or the made one's
 * file (src/main.ts keeps it in DATA_DIR).
 */
const serverTls = (o: Pick<MysqlServerOptions, 'tls' | 'host'>) => {
  if (o.tls !== undefined) return o.tls || undefined;
  return selfSignedCertificate({ hosts: certificateHosts(o.host) });
};

/** The names a made certificate is for: this machine's, and the address listened on (unless any). */
export const certificateHosts = (host: string) => [
  'localhost',
  '127.0.0.1',
  '::1',
  os.hostname(),
  ...(host === '0.0.0.0' || host === '::' || host === '' ? [] : [host]),
];

/** Listens for MySQL clients and serves the SQL engine to them. */
export const startMysqlServer = async (o: MysqlServerOptions): Promise<MysqlServer> => {
  const connections = new Map<number, MysqlConnection>();
  const view: ServerView = {
    processes: () => [...connections.values()].map((c) => c.processRow()),
    kill: (id, scope) => {
      const target = connections.get(id);
      if (!target) return false;
      target.interrupt('killed');
      if (scope === 'connection') target.destroy();
      return true;
    },
  };
  const certificate = serverTls(o);
  const secureContext = certificate ? tls.createSecureContext(certificate) : undefined;
  const defaultPlugin = o.defaultAuthPlugin ?? (o.auth && !o.auth.passwordOf ? CACHING_SHA2 : NATIVE);
  const facts: ServerFacts = {
    serverVersion: o.serverVersion ?? '8.0.17-mindledger',
    versionComment: o.versionComment ?? 'mindledger (MindsDB-compatible)',
    port: o.port,
    hostname: os.hostname(),
    tls: secureContext !== undefined,
    defaultAuthPlugin: defaultPlugin,
    maxAllowedPacket: o.maxPacketBytes ?? 64 * 1024 * 1024,
  };
  const rsaKeys = o.rsaKeys ? () => Promise.resolve(o.rsaKeys!) : lazyRsaKeys();
  // Made now, off the event loop, rather than when a first client asks: a 2048-bit key can take
  // seconds on a busy machine, which came out of that client's handshake time (MYSQL_PREAUTH_TIMEOUT_MS).
  if (o.auth) rsaKeys().catch((err: unknown) => o.logger.error({ err }, 'MySQL RSA key not made'));
  const sha2Cache = new BoundedMap<string, Buffer>(SHA2_CACHE_ENTRIES);

  const listener = await listenForClients({
    protocol: 'MySQL',
    ...doorPlace(o),
    connections,
    refusal: () => {
      // MySQL's answer in place of the greeting.
      const w = new PacketWriter();
      errPacket(w, 1040, '08004', 'Too many connections');
      return w.take();
    },
    open: (socket, id, ticket) =>
      new MysqlConnection(socket, id, {
        engine: o.engine,
        facts,
        defaultDatabase: o.defaultDatabase ?? 'mindsdb',
        server: view,
        logger: o.logger,
        tls: secureContext,
        auth: { authenticator: o.auth, rsaKeys, sha2Cache, defaultPlugin },
        maxRows: o.maxRows,
        maxPacketBytes: facts.maxAllowedPacket,
        handshakeTimeoutMs: o.handshakeTimeoutMs ?? 5_000,
        onLoggedIn: ticket.loggedIn,
        maxParams: o.maxParams ?? 10_000,
      }),
    ended: (id) => o.auth?.signedOut?.(id),
    interrupt: (c) => c.interrupt('shutdown'),
    describe: { tls: o.tls === undefined ? 'self-signed' : o.tls ? 'given' : 'off' },
  });
  // @@port names the port listened on (a free one when asked for 0).
  facts.port = listener.port;
  return {
    port: listener.port,
    connections: () => connections.size,
    close: (graceMs) => listener.close(graceMs),
  };
};
