import { execFile } from 'node:child_process';
import net from 'node:net';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages';
import { Parser } from 'pg-protocol/dist/parser';
import pino from 'pino';
import type { SqlEngine } from '../../src/doorway/engine';
import { startPgServer, type PgServer, type PgServerOptions } from '../../src/pgwire';
import { sqlDoor } from '../../src/users/sqlDoors';
import { startTestApp, type StoreKind, type TestApp } from '../support/app';

/** One call the server made to the engine, with the signal it passed. */
export type EngineCall = { query: string; params: Record<string, unknown>; signal: AbortSignal | undefined };

export type CliResult = { code: number; stdout: string; stderr: string };

export type PgFront = {
  app: TestApp;
  server: PgServer;
  port: number;
  /** Every statement the server sent the engine, in order. */
  calls: EngineCall[];
  /** A node-postgres client, connected (closed by `dispose`). */
  connect(options?: pg.ClientConfig): Promise<pg.Client>;
  /** The `psql` command-line client against the server. */
  psql(sql: string, o?: PsqlOptions): Promise<CliResult>;
  dispose(): Promise<void>;
};

const silent = pino({ level: 'silent' });

/**
 * The PostgreSQL door as src/main.ts builds it (the users' door, 'postgres' interface), each
 * statement recorded on its way to the engine.
 */
export const doorEngine = (app: TestApp, authOn: boolean, calls: EngineCall[] = []) => {
  const door = sqlDoor(app.running.services.users, app.running.sql, authOn, 'postgres');
  const engine: Required<SqlEngine> = {
    execute: (query, context, params, signal, client) => {
      calls.push({ query, params, signal });
      return door.engine.execute(query, context, params, signal, client);
    },
    stream: (query, context, params, signal, client) => {
      calls.push({ query, params, signal });
      return door.engine.stream(query, context, params, signal, client);
    },
  };
  return { auth: door.auth, engine };
};

/** The PostgreSQL server in front of an app's door, on a free loopback port. */
export const startPgDoor = async (
  app: TestApp,
  o: { authOn?: boolean; calls?: EngineCall[]; server?: Partial<PgServerOptions> } = {},
) => {
  const door = doorEngine(app, o.authOn ?? false, o.calls);
  return startPgServer({
    engine: door.engine,
    auth: door.auth,
    host: '127.0.0.1',
    port: 0,
    logger: silent,
    ...o.server,
  });
};

/** A running app (fresh store) with the PostgreSQL server in front of its SQL engine. */
export const startPgFront = async (
  o: { kind?: StoreKind; env?: Record<string, string>; server?: Partial<PgServerOptions> } = {},
): Promise<PgFront> => {
  const app = await startTestApp(o.kind ?? 'sqlite', o.env ?? {});
  const calls: EngineCall[] = [];
  const server = await startPgDoor(app, { calls, server: o.server });
  const opened: pg.Client[] = [];
  return {
    app,
    server,
    port: server.port,
    calls,
    connect: (options = {}) => pgClient(server.port, options, opened),
    psql: (sql, options) => runPsql(server.port, sql, options),
    dispose: async () => {
      await Promise.all(opened.map((c) => c.end().catch(() => undefined)));
      await server.close(0);
      await app.dispose();
    },
  };
};

/**
 * A connected node-postgres client. Errors it emits while no query runs (a FATAL at shutdown, a cut)
 * are not thrown at the test: the specs read them from the queries they fail or from the server.
 */
export const pgClient = async (port: number, options: pg.ClientConfig = {}, opened: pg.Client[] = []) => {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'analyst', database: 'mindsdb', ...options });
  client.on('error', () => undefined);
  opened.push(client);
  await client.connect();
  return client;
};

/** A node-postgres error's fields (DatabaseError), for matching. */
export type PgError = { code?: string; message?: string; detail?: string; severity?: string };
export const failureOf = (p: Promise<unknown>): Promise<PgError> =>
  p.then(
    (value: unknown) => ({ message: `no error: ${printable(value)}` }),
    (e: PgError) => e,
  );

/** What a promise expected to fail gave instead: a result's rows, or what can be printed of it. */
const printable = (value: unknown) => {
  if (value instanceof pg.Client) return 'a connected client';
  try {
    return JSON.stringify((value as { rows?: unknown } | null)?.rows ?? value);
  } catch {
    return String(value);
  }
};

export type PsqlOptions = {
  user?: string;
  /** Arguments before `-c`. */
  args?: string[];
  /** Environment beside the PG* variables the host may have (which are removed). */
  env?: Record<string, string>;
  /** Fed on standard input instead of `-c`. */
  script?: boolean;
};

/** psql 15 against `port`: unaligned, tuples only, no ~/.psqlrc; `sql` with -c or, as a script, on stdin. */
export const runPsql = (port: number, sql: string, o: PsqlOptions = {}): Promise<CliResult> =>
  new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('PG')),
    );
    const args = [
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-U',
      o.user ?? 'analyst',
      '-d',
      'mindsdb',
      '-X',
      '-A',
      '-t',
      ...(o.args ?? []),
      ...(o.script ? [] : ['-c', sql]),
    ];
    const child = execFile(
      'psql',
      args,
      {
        timeout: 30_000,
        env: { ...env, PGCONNECT_TIMEOUT: '10', PGSSLMODE: 'disable', ...o.env },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin!.end(o.script ? sql : '');
  });

/** A DataRow with its cells as the bytes sent (pg-protocol's parser would decode them as UTF-8 text). */
export type RawDataRow = { name: 'dataRow'; length: number; cells: (Buffer | null)[] };
/** NegotiateProtocolVersion ('v'), which pg-protocol's parser does not know. */
export type RawNegotiation = {
  name: 'negotiateProtocolVersion';
  length: number;
  minor: number;
  options: string[];
};
export type RawMessage = BackendMessage | RawDataRow | RawNegotiation;

const negotiationOf = (message: Buffer): RawNegotiation => {
  const options = message.subarray(13).toString('utf8').split('\0');
  return {
    name: 'negotiateProtocolVersion',
    length: message.length - 1,
    minor: message.readInt32BE(5),
    options: options.slice(0, message.readInt32BE(9)),
  };
};

/** Larger than any message these specs receive: a length past it is a broken stream, not a message to wait for. */
const MAX_SANE_MESSAGE = 64 * 1024 * 1024;

const dataRowOf = (message: Buffer): RawDataRow => {
  const cells: (Buffer | null)[] = [];
  let at = 7;
  for (let i = message.readInt16BE(5); i > 0; i--) {
    const length = message.readInt32BE(at);
    at += 4;
    cells.push(length < 0 ? null : Buffer.from(message.subarray(at, at + length)));
    at += Math.max(length, 0);
  }
  return { name: 'dataRow', length: message.length - 1, cells };
};

/**
 * A PostgreSQL client written by hand (pg-protocol's serializer, and its parser for all but rows):
 * for what drivers do not expose (Execute with a row count, binary cells as sent, CancelRequest,
 * a message too large).
 */
export class RawPg {
  private readonly received: RawMessage[] = [];
  private readonly parser = new Parser();
  private pending = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  private ended = false;
  /** The bytes (hex) where the server's output stopped making sense as messages, if it did. */
  private unframeable: string | undefined;

  private constructor(readonly socket: net.Socket) {
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 5 && !this.unframeable) {
        const length = this.pending.readInt32BE(1);
        if (length < 4 || length > MAX_SANE_MESSAGE) {
          this.unframeable = this.pending.subarray(0, 64).toString('hex');
          break;
        }
        if (this.pending.length < length + 1) break;
        const message = this.pending.subarray(0, length + 1);
        this.pending = this.pending.subarray(length + 1);
        if (message[0] === 0x44) this.received.push(dataRowOf(message));
        else if (message[0] === 0x76) this.received.push(negotiationOf(message));
        else this.parser.parse(message, (m) => this.received.push(m));
      }
      this.wake?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
  }

  /** A socket on `port`, logged in with `params` when given (the startup exchange read up to ReadyForQuery). */
  static async connect(
    port: number,
    params: Record<string, string> | null = { user: 'raw' },
    host = '127.0.0.1',
  ) {
    const socket = net.connect(port, host);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const raw = new RawPg(socket);
    if (params) {
      raw.send(serialize.startup({ database: 'mindsdb', ...params }));
      await raw.until('readyForQuery');
    }
    return raw;
  }

  send(...messages: Buffer[]) {
    this.socket.write(Buffer.concat(messages));
  }

  private async waitAWhile() {
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      setTimeout(resolve, 50);
    });
  }

  /** Messages up to and including the first named `name`; fails if the server ends the connection first. */
  async until(name: string, timeoutMs = 20_000): Promise<RawMessage[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.received.findIndex((m) => m.name === name);
      if (at >= 0) return this.received.splice(0, at + 1);
      const seen = JSON.stringify(this.received.map((m) => m.name));
      if (this.unframeable)
        throw new Error(`after ${seen}, the server sent bytes that are no message: ${this.unframeable}`);
      if (this.ended) throw new Error(`connection ended before ${name}: ${seen}`);
      if (Date.now() > deadline) throw new Error(`no ${name} in time: ${seen}`);
      await this.waitAWhile();
    }
  }

  /** Everything received until the server ended the connection. */
  async rest(timeoutMs = 20_000): Promise<RawMessage[]> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('the connection did not end');
      await this.waitAWhile();
    }
    return this.received.splice(0);
  }

  destroy() {
    this.socket.destroy();
  }
}

/** The cells of DataRow messages as bytes. */
export const cellsOf = (messages: RawMessage[]) =>
  messages.filter((m): m is RawDataRow => m.name === 'dataRow').map((m) => m.cells);

/** The cells of DataRow messages as text. */
export const rowsOf = (messages: RawMessage[]) =>
  cellsOf(messages).map((cells) => cells.map((c) => (c === null ? null : c.toString('utf8'))));

/** The names of messages, in order (row messages kept). */
export const namesOf = (messages: RawMessage[]) => messages.map((m) => m.name);

/** A CancelRequest, as libpq sends it: on a connection of its own, 16 bytes, then the server hangs up. */
export const sendCancelRequest = async (port: number, processId: number, secret: number) => {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(80877102, 4);
  packet.writeInt32BE(processId, 8);
  packet.writeInt32BE(secret, 12);
  socket.end(packet);
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
};

/** Resolves once `predicate` holds, checking every 10 ms. */
export const eventually = async (predicate: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** A query DuckDB works on for hours unless interrupted (no cache answers it). */
export const endlessQuery = (tag: string) =>
  `SELECT sum(i * 2) AS s, '${tag}' AS tag FROM range(1000000000000::BIGINT) t(i)`;
